/* Phase 2: paragraphs, list items, de-hyphenation, headings and the Element objects
 * (pdf.order.split_blocks, join_lines; pdf.elements._heading_kind, _classify). Part of _pdfcore.c. */
/* ^(?:[bullets\-–—*]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)]|\([ivxlc]{1,5}\))\s+[\w("“‘'„] */
static int after_prefix(const Py_UCS4 *t, Py_ssize_t n, Py_ssize_t k) {
    if (k <= 0 || k >= n || !is_space(t[k])) return 0;
    while (k < n && is_space(t[k])) k++;
    if (k >= n) return 0;
    Py_UCS4 c = t[k];
    return is_word(c) || c == '(' || c == '"' || c == 0x201c || c == 0x2018 || c == '\'' || c == 0x201e;
}

static int is_roman_letter(Py_UCS4 c) { return c == 'i' || c == 'v' || c == 'x' || c == 'l' || c == 'c'; }

static int is_bullet(const Py_UCS4 *t, Py_ssize_t n) {
    if (!n) return 0;
    Py_UCS4 c = t[0];
    if ((is_bullet_glyph(c) || c == '-' || c == 0x2013 || c == 0x2014 || c == '*') && after_prefix(t, n, 1)) return 1;
    Py_ssize_t p = c == '(' ? 1 : 0;
    Py_ssize_t d = p;
    while (d < n && Py_UNICODE_ISDECIMAL(t[d])) d++;
    if (d - p >= 1 && d - p <= 3 && d < n && (t[d] == '.' || t[d] == ')') && after_prefix(t, n, d + 1)) return 1;
    if (p < n && ((t[p] >= 'a' && t[p] <= 'z') || (t[p] >= 'A' && t[p] <= 'Z')) && p + 1 < n &&
        (t[p + 1] == '.' || t[p + 1] == ')') && after_prefix(t, n, p + 2))
        return 1;
    if (c == '(') {
        Py_ssize_t r = 1;
        while (r < n && is_roman_letter(t[r])) r++;
        if (r - 1 >= 1 && r - 1 <= 5 && r < n && t[r] == ')' && after_prefix(t, n, r + 1)) return 1;
    }
    return 0;
}

/* (?:\.\s?){4,}\s*\S{1,6}$ searched anywhere */
static int has_leader(const Py_UCS4 *t, Py_ssize_t n) {
    if (n && t[n - 1] == '\n') n--; /* $ also matches before a final newline */
    for (Py_ssize_t k = 1; k <= 6 && k <= n; k++) {
        if (is_space(t[n - k])) break;
        Py_ssize_t p = n - k, q = p;
        for (;;) {
            /* the dots end at q; (\.\s?) units counted backwards */
            Py_ssize_t j = q, units = 0;
            while (j > 0) {
                if (t[j - 1] == '.') { j--; units++; }
                else if (j >= 2 && is_space(t[j - 1]) && t[j - 2] == '.') { j -= 2; units++; }
                else break;
            }
            if (units >= 4) return 1;
            if (q > 0 && is_space(t[q - 1])) q--;
            else break;
        }
    }
    return 0;
}

static int breaks(LineSet *s, CLine *prev, CLine *ln, double left, double right, double usual_gap, double body) {
    double size = ln->size > prev->size ? ln->size : prev->size;
    double ratio = prev->size > 0 ? ln->size / prev->size : 1.0;
    if (ratio > 1.12 || ratio < 0.89) return 1;
    if (has_leader(TXT(s, prev), prev->len)) return 1;
    double gap = prev->y0 - ln->y1;
    double smaller = ln->size < prev->size ? ln->size : prev->size;
    if (body != 0.0 && smaller >= 1.15 * body && 0.97 <= ratio && ratio <= 1.03)
        return gap > 1.0 * size || gap < -0.5 * size;
    if (gap > (usual_gap < 0.0 ? 0.0 : usual_gap) + 0.45 * size || gap < -0.5 * size) return 1;
    if (ln->x0 - left > 0.8 * size && prev->x0 - left < 0.5 * size && ln->x1 > right - 3 * size) return 1;
    Py_UCS4 f = ln->len ? TXT(s, ln)[0] : 0;
    int measured = ln->len && (Py_UNICODE_ISUPPER(f) || Py_UNICODE_ISDIGIT(f));
    if (measured && prev->bold != ln->bold && (prev->bold ? prev : ln)->x1 < right - 2.5 * size) return 1;
    return prev->x1 < right - 2.5 * size && prev->len && is_sentence_end(TXT(s, prev)[prev->len - 1]);
}

static int join_lines(LineSet *s, const int *idx, Py_ssize_t m, UBuf *out) {
    out->n = 0;
    CLine *first = &s->lines[idx[0]];
    if (ubuf_put(out, TXT(s, first), first->len) < 0) return -1;
    for (Py_ssize_t k = 1; k < m; k++) {
        CLine *prev = &s->lines[idx[k - 1]], *ln = &s->lines[idx[k]];
        const Py_UCS4 *nxt = TXT(s, ln);
        if (!ln->len) continue;
        int explicit_ = out->n > 1 && out->a[out->n - 1] == '-' && Py_UNICODE_ISALPHA(out->a[out->n - 2]);
        if (prev->hyphen || explicit_) {
            if (explicit_) out->n--;
            if (!Py_UNICODE_ISLOWER(nxt[0]) && ubuf_putc(out, '-') < 0) return -1;
            if (ubuf_put(out, nxt, ln->len) < 0) return -1;
        } else if (out->n && is_cjk(out->a[out->n - 1]) && is_cjk(nxt[0])) {
            if (ubuf_put(out, nxt, ln->len) < 0) return -1;
        } else {
            if (out->n && ubuf_putc(out, ' ') < 0) return -1;
            if (ubuf_put(out, nxt, ln->len) < 0) return -1;
        }
    }
    if (s->lines[idx[m - 1]].hyphen && ubuf_putc(out, '-') < 0) return -1;
    return 0;
}

static int has_leader(const Py_UCS4 *t, Py_ssize_t n);

/* pdf.elements._heading_kind: "size", "bold" or NULL (None) */
static int heading_kind(const Py_UCS4 *t, Py_ssize_t n, int list_item, int vertical, Py_ssize_t nlines,
                        double size, int bold, double body) {
    if (list_item || vertical || nlines > 4) return 0;
    int alpha = 0;
    for (Py_ssize_t i = 0; i < n && !alpha; i++) alpha = Py_UNICODE_ISALPHA(t[i]);
    if (!alpha || has_leader(t, n)) return 0;
    if (size >= 1.15 * body && n <= 250) return 1;
    if (bold && nlines <= 2 && n <= 150 && size >= 0.9 * body &&
        !(n && (t[n - 1] == '.' || t[n - 1] == ',' || t[n - 1] == ';')))
        return 2;
    return 0;
}

/* ^(Table|Tab\.|Tabelle)\s*\d: a block that reads like a table's caption (pdf.elements._table_elements) */
static int is_caption(const Py_UCS4 *t, Py_ssize_t n) {
    static const char *prefixes[] = {"Table", "Tab.", "Tabelle"};
    for (size_t k = 0; k < sizeof(prefixes) / sizeof(prefixes[0]); k++) {
        Py_ssize_t m = (Py_ssize_t)strlen(prefixes[k]), i = 0;
        if (n < m) continue;
        while (i < m && t[i] == (Py_UCS4)prefixes[k][i]) i++;
        if (i < m) continue;
        while (i < n && is_space(t[i])) i++;
        if (i < n && Py_UNICODE_ISDECIMAL(t[i])) return 1;
    }
    return 0;
}

static CBlock *new_block(LineSet *s) {
    if (GROW(s, blocks, nblocks, bcap, 1, 32) < 0) return NULL;
    CBlock *blk = &s->blocks[s->nblocks++];
    memset(blk, 0, sizeof(*blk));
    blk->table = -1;
    return blk;
}

static int store_block(LineSet *s, const int *idx, Py_ssize_t m, int list_item, UBuf *buf, double body) {
    if (join_lines(s, idx, m, buf) < 0) return -1;
    Py_UCS4 *t = buf->a;
    Py_ssize_t n = buf->n;
    int control = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (is_control(t[i])) { control = 1; break; }
    if (control) { /* " ".join(_CONTROL.sub("", text).split()) */
        Py_ssize_t w = 0;
        int pending = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_UCS4 c = t[i];
            if (is_control(c)) continue;
            if (is_space(c)) { pending = w > 0; continue; }
            if (pending) { t[w++] = ' '; pending = 0; }
            t[w++] = c;
        }
        n = w;
    }
    Py_ssize_t from = 0;
    if (list_item && n && is_bullet_glyph(t[0])) {
        from = 1;
        while (from < n && is_space(t[from])) from++;
    }
    CLine *L = s->lines;
    double size = L[idx[0]].size;
    if (m > 1) {
        Py_ssize_t best = 0;
        for (Py_ssize_t k = 1; k < m; k++)
            if (L[idx[k]].len > L[idx[best]].len) best = k;
        size = L[idx[best]].size;
    }
    int bold = 1;
    double top = L[idx[0]].y1;
    for (Py_ssize_t k = 0; k < m; k++) {
        if (!L[idx[k]].bold) bold = 0;
        if (L[idx[k]].y1 > top) top = L[idx[k]].y1;
    }
    int heading = heading_kind(t + from, n - from, list_item, L[idx[0]].vertical, m, size, bold, body);
    Py_ssize_t a = from, b = n; /* the element's text: the block's text stripped */
    while (a < b && is_space(t[a])) a++;
    while (b > a && is_space(t[b - 1])) b--;
    CBlock *blk = new_block(s);
    if (!blk) return -1;
    blk->text = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, t + a, b - a);
    if (!blk->text) return -1;
    if (is_caption(t + from, n - from)) {
        blk->caption = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, t + from, n - from);
        if (!blk->caption) return -1;
    }
    blk->size = size;
    blk->top = top;
    blk->list_item = (char)list_item;
    blk->heading = (char)heading;
    return 0;
}

/* a table stand-in's block: its Markdown, size and top */
static int store_table_block(LineSet *s, int line) {
    CLine *ln = &s->lines[line];
    CBlock *blk = new_block(s);
    if (!blk) return -1;
    Py_ssize_t a = 0, b = ln->len;
    const Py_UCS4 *t = TXT(s, ln);
    while (a < b && is_space(t[a])) a++;
    while (b > a && is_space(t[b - 1])) b--;
    blk->text = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, t + a, b - a);
    if (!blk->text) return -1;
    blk->size = ln->size;
    blk->top = ln->y1;
    blk->table = ln->table;
    return 0;
}

static void clear_blocks(LineSet *s) {
    for (Py_ssize_t i = 0; i < s->nblocks; i++) {
        Py_CLEAR(s->blocks[i].text);
        Py_CLEAR(s->blocks[i].caption);
    }
    s->nblocks = 0;
}

static int split_blocks(LineSet *s, IVec *g, double body, UBuf *buf) {
    Py_ssize_t n = g->n;
    if (!n) return 0;
    CLine *L = s->lines;
    double left = L[g->a[0]].x0, right = L[g->a[0]].x1;
    for (Py_ssize_t i = 1; i < n; i++) {
        if (L[g->a[i]].x0 < left) left = L[g->a[i]].x0;
        if (L[g->a[i]].x1 > right) right = L[g->a[i]].x1;
    }
    double usual_gap;
    if (n - 1 >= 3) {
        double *gaps = PyMem_Malloc((size_t)(n - 1) * sizeof(double));
        if (!gaps) { PyErr_NoMemory(); return -1; }
        for (Py_ssize_t i = 0; i + 1 < n; i++) gaps[i] = L[g->a[i]].y0 - L[g->a[i + 1]].y1;
        qsort(gaps, (size_t)(n - 1), sizeof(double), cmp_double);
        usual_gap = gaps[(n - 1) / 2];
        PyMem_Free(gaps);
    } else {
        usual_gap = 0.2 * L[g->a[0]].size;
    }
    Py_ssize_t cur = 0; /* current block: g->a[cur .. i) */
    int list_item = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        CLine *ln = &s->lines[g->a[i]];
        if (ln->table >= 0) { /* a table: its own block, between the paragraphs around it */
            if (i > cur && store_block(s, g->a + cur, i - cur, list_item, buf, body) < 0) return -1;
            if (store_table_block(s, g->a[i]) < 0) return -1;
            cur = i + 1;
            list_item = 0;
            continue;
        }
        int bullet = is_bullet(TXT(s, ln), ln->len);
        if (i > cur && (bullet || breaks(s, &s->lines[g->a[i - 1]], ln, left, right, usual_gap, body))) {
            if (store_block(s, g->a + cur, i - cur, list_item, buf, body) < 0) return -1;
            cur = i;
        }
        if (i == cur) list_item = bullet;
    }
    return cur < n ? store_block(s, g->a + cur, n - cur, list_item, buf, body) : 0;
}

static PyObject *ls_blocks(LineSet *s, PyObject *args) {
    double body;
    if (!PyArg_ParseTuple(args, "d", &body)) return NULL;
    s->nlines = s->page_lines; /* forget rows joined and blocks built by an earlier call */
    clear_blocks(s);
    IVec flat = {NULL, 0, 0};
    Groups groups = {NULL, 0, 0};
    UBuf buf = {NULL, 0, 0};
    PyObject *result = NULL;
    IVec vertical = {NULL, 0, 0};
    for (Py_ssize_t i = 0; i < s->page_lines; i++) {
        if (s->lines[i].dropped) continue;
        if (ivec_push(s->lines[i].vertical ? &vertical : &flat, (int)i) < 0) { ivec_free(&vertical); goto fail; }
    }
    if (reading_groups(s, &flat, &groups) < 0) { ivec_free(&vertical); goto fail; }
    if (vertical.n && groups_add(&groups, vertical) < 0) { ivec_free(&vertical); goto fail; }
    for (Py_ssize_t g = 0; g < groups.n; g++)
        if (split_blocks(s, &groups.a[g], body, &buf) < 0) goto fail;
    result = PyList_New(0); /* the headings by size: [(block index, size, top)] */
    for (Py_ssize_t i = 0; result && i < s->nblocks; i++) {
        if (s->blocks[i].heading != 1) continue;
        PyObject *t = Py_BuildValue("(ndd)", i, s->blocks[i].size, s->blocks[i].top);
        if (!t || PyList_Append(result, t) < 0) { Py_XDECREF(t); Py_CLEAR(result); }
        else Py_DECREF(t);
    }
fail:
    ivec_free(&flat);
    groups_free(&groups);
    PyMem_Free(buf.a);
    return result;
}

static PyObject *S_kind, *S_text, *S_level, *S_page, *S_attributes;

/* an Element built the way its frozen dataclass __init__ builds it (object.__setattr__ per field);
 * the checks of __post_init__ hold by construction: pages and levels start at 1 */
static PyObject *new_element(PyTypeObject *cls, PyObject *kind, PyObject *text, PyObject *level, PyObject *page) {
    PyObject *obj = cls->tp_alloc(cls, 0);
    if (!obj) return NULL;
    PyObject *attributes = PyDict_New();
    if (!attributes || PyObject_GenericSetAttr(obj, S_kind, kind) < 0 ||
        PyObject_GenericSetAttr(obj, S_text, text) < 0 || PyObject_GenericSetAttr(obj, S_level, level) < 0 ||
        PyObject_GenericSetAttr(obj, S_page, page) < 0 || PyObject_GenericSetAttr(obj, S_attributes, attributes) < 0) {
        Py_XDECREF(attributes);
        Py_DECREF(obj);
        return NULL;
    }
    Py_DECREF(attributes);
    return obj;
}

/* ^(\d+(?:\.\d+)*)\.?\s+\S: the dots of a section number ("2.3 Title" -> 1), or -1 */
static int numbered_dots(PyObject *text) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), i = 0;
    int kind = PyUnicode_KIND(text), dots = 0;
    const void *d = PyUnicode_DATA(text);
    if (!n || !Py_UNICODE_ISDECIMAL(PyUnicode_READ(kind, d, 0))) return -1;
    for (;;) {
        while (i < n && Py_UNICODE_ISDECIMAL(PyUnicode_READ(kind, d, i))) i++;
        if (i + 1 < n && PyUnicode_READ(kind, d, i) == '.' && Py_UNICODE_ISDECIMAL(PyUnicode_READ(kind, d, i + 1))) {
            dots++;
            i++;
            continue;
        }
        break;
    }
    if (i < n && PyUnicode_READ(kind, d, i) == '.') i++;
    if (i >= n || !is_space(PyUnicode_READ(kind, d, i))) return -1;
    while (i < n && is_space(PyUnicode_READ(kind, d, i))) i++;
    return i < n ? dots : -1;
}

/* pdf.elements._classify for this page: Elements of the stored blocks; a table's come from
 * table_elements(table index, caption beside it or None) */
static PyObject *ls_elements(LineSet *s, PyObject *args) {
    PyObject *cls, *kinds, *page, *levels, *table_elements;
    Py_ssize_t title;
    int deepest;
    if (!PyArg_ParseTuple(args, "OO!OnO!iO", &cls, &PyTuple_Type, &kinds, &page, &title, &PyDict_Type, &levels,
                          &deepest, &table_elements))
        return NULL;
    if (!PyType_Check(cls) || PyTuple_GET_SIZE(kinds) != 4) {
        PyErr_SetString(PyExc_TypeError, "elements(Element, (TITLE, HEADING, PARAGRAPH, LIST_ITEM), page, ...)");
        return NULL;
    }
    PyObject *k_title = PyTuple_GET_ITEM(kinds, 0), *k_heading = PyTuple_GET_ITEM(kinds, 1);
    PyObject *k_paragraph = PyTuple_GET_ITEM(kinds, 2), *k_list = PyTuple_GET_ITEM(kinds, 3);
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < s->nblocks; i++) {
        CBlock *b = &s->blocks[i];
        PyObject *e, *level = NULL;
        if (!PyUnicode_GET_LENGTH(b->text)) continue;
        if (i == title) {
            e = new_element((PyTypeObject *)cls, k_title, b->text, Py_None, page);
        } else if (b->table >= 0) {
            PyObject *caption = Py_None;
            for (Py_ssize_t j = i - 1; j <= i + 1; j += 2) {
                if (j >= 0 && j < s->nblocks && s->blocks[j].table < 0 && s->blocks[j].caption) {
                    caption = s->blocks[j].caption;
                    break;
                }
            }
            PyObject *more = PyObject_CallFunction(table_elements, "iO", b->table, caption);
            if (!more) { Py_DECREF(out); return NULL; }
            Py_ssize_t at = PyList_GET_SIZE(out);
            int rc = PyList_SetSlice(out, at, at, more);
            Py_DECREF(more);
            if (rc < 0) { Py_DECREF(out); return NULL; }
            continue;
        } else if (b->heading) {
            if (b->heading == 1) {
                PyObject *key = PyLong_FromSsize_t(i);
                level = key ? PyDict_GetItemWithError(levels, key) : NULL;
                Py_XDECREF(key);
                if (!level) {
                    if (!PyErr_Occurred()) PyErr_SetString(PyExc_KeyError, "elements(): no level for a heading");
                    Py_DECREF(out);
                    return NULL;
                }
                Py_INCREF(level);
            } else {
                int dots = numbered_dots(b->text);
                int lv = dots >= 0 ? dots + 1 : deepest + 1;
                level = PyLong_FromLong(lv < 6 ? lv : 6);
                if (!level) { Py_DECREF(out); return NULL; }
            }
            e = new_element((PyTypeObject *)cls, k_heading, b->text, level, page);
            Py_DECREF(level);
        } else if (b->list_item) {
            PyObject *one = PyLong_FromLong(1);
            e = one ? new_element((PyTypeObject *)cls, k_list, b->text, one, page) : NULL;
            Py_XDECREF(one);
        } else {
            e = new_element((PyTypeObject *)cls, k_paragraph, b->text, Py_None, page);
        }
        if (!e || PyList_Append(out, e) < 0) { Py_XDECREF(e); Py_DECREF(out); return NULL; }
        Py_DECREF(e);
    }
    return out;
}

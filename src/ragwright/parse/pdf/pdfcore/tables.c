/* Rules, images and table regions of a page (pdf.tables.scan_graphics, _regions) and the rows of
 * words of a region (pdf.tables.region_rows). Part of _pdfcore.c. */
/* ---------------------------------------------------------------- table rows (pdf.tables.region_rows) */

typedef struct { double x0, x1, y0, y1; Py_ssize_t off, len; } Word; /* text in a UBuf */
typedef struct { Word *a; Py_ssize_t n, cap; } WVec;

static int wvec_push(WVec *v, Word w) {
    if (GROW(v, a, n, cap, 1, 32) < 0) return -1;
    v->a[v->n++] = w;
    return 0;
}

/* pdf.layout.char_words: the words of one line with their boxes, appended to out (texts in chars) */
static int line_words(LineSet *s, void *tp, CLine *ln, WVec *out, UBuf *chars) {
    RectF rect = {0, 0, 0, 0};
    int open = 0;
    Word w = {0, 0, 0, 0, 0, 0};
    double gap_limit = 0.25 * ln->size;
    for (int i = ln->start; i <= ln->end; i++) {
        Py_UCS4 ch = s->text[i];
        if (is_space(ch)) {
            if (open) {
                w.len = chars->n - w.off;
                if (wvec_push(out, w) < 0) return -1;
            }
            open = 0;
            continue;
        }
        double l, b, r, t;
        loose_box(tp, i, &rect, &l, &b, &r, &t);
        if (open && l - w.x1 > gap_limit) {
            w.len = chars->n - w.off;
            if (wvec_push(out, w) < 0) return -1;
            open = 0;
        }
        if (!open) {
            w.x0 = l; w.x1 = r; w.y0 = b; w.y1 = t;
            w.off = chars->n;
            open = 1;
        }
        if (ubuf_putc(chars, ch == 0xfffe ? '-' : ch) < 0) return -1;
        w.x1 = w.x1 > r ? w.x1 : r;
    }
    if (open) {
        w.len = chars->n - w.off;
        if (wvec_push(out, w) < 0) return -1;
    }
    return 0;
}

static int less_neg_top(const void *ctx, int a, int b) {
    const Word *W = ctx;
    return -W[a].y1 < -W[b].y1;
}

static int less_wx0(const void *ctx, int a, int b) {
    const Word *W = ctx;
    return W[a].x0 < W[b].x0;
}

/* _split_by_height of the words first..n of W: rows (top to bottom by first word, each by x0) into rows */
static int split_by_height(const Word *W, Py_ssize_t first, Py_ssize_t n, Groups *rows) {
    Py_ssize_t m = n - first;
    if (m <= 0) return 0;
    int *order = PyMem_Malloc((size_t)m * sizeof(int));
    int *row_of = PyMem_Malloc((size_t)m * sizeof(int));
    int *firsts = PyMem_Malloc((size_t)m * sizeof(int));
    int rc = -1;
    if (!order || !row_of || !firsts) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t i = 0; i < m; i++) order[i] = (int)(first + i);
    if (merge_sort(order, m, less_neg_top, W) < 0) goto done;
    Py_ssize_t nrows = 0;
    for (Py_ssize_t k = 0; k < m; k++) {
        const Word *w = &W[order[k]];
        Py_ssize_t r = 0;
        for (; r < nrows; r++) {
            const Word *f = &W[firsts[r]];
            double top = f->y1, bottom = f->y0;
            double overlap = (top < w->y1 ? top : w->y1) - (bottom > w->y0 ? bottom : w->y0);
            double ha = top - bottom, hb = w->y1 - w->y0;
            if (overlap >= 0.4 * (hb < ha ? hb : ha)) break;
        }
        if (r == nrows) firsts[nrows++] = order[k];
        row_of[k] = (int)r;
    }
    for (Py_ssize_t r = 0; r < nrows; r++) {
        IVec row = {NULL, 0, 0}; /* the row's words in the order they joined it, then by x0 (stable) */
        for (Py_ssize_t k = 0; k < m; k++)
            if (row_of[k] == r && ivec_push(&row, order[k]) < 0) { ivec_free(&row); goto done; }
        if (merge_sort(row.a, row.n, less_wx0, W) < 0 || groups_add(rows, row) < 0) { ivec_free(&row); goto done; }
    }
    rc = 0;
done:
    PyMem_Free(order);
    PyMem_Free(row_of);
    PyMem_Free(firsts);
    return rc;
}

/* the prose test of _read_region: the widest gap between neighbouring words under 0.55 x the tallest word */
static int is_prose(const Word *W, const IVec *row) {
    double gap = 0.0, height = 0.0;
    for (Py_ssize_t k = 0; k < row->n; k++) {
        const Word *w = &W[row->a[k]];
        if (k) {
            double g = w->x0 - W[row->a[k - 1]].x1;
            if (k == 1 || g > gap) gap = g;
        }
        double h = w->y1 - w->y0;
        if (!k || h > height) height = h;
    }
    return gap < 0.55 * height;
}

/* pdf.tables._boundaries over the body rows: column boundaries */
static int boundaries(const Word *W, const Groups *rows, const char *prose, double min_gap, const double *rule_xs,
                      Py_ssize_t nrules, PyObject *out) {
    Py_ssize_t nbody = 0, ne = 0, cap = 0;
    for (Py_ssize_t r = 0; r < rows->n; r++) {
        if (prose[r]) continue;
        nbody++;
        cap += 2 * rows->a[r].n;
    }
    Event *events = PyMem_Malloc((size_t)(cap ? cap : 1) * sizeof(Event));
    if (!events) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t r = 0; r < rows->n; r++) {
        if (prose[r]) continue;
        const IVec *row = &rows->a[r]; /* _merge_intervals: words by x0 (already), overlapping merged */
        double a = 0, b = 0;
        int open = 0;
        for (Py_ssize_t k = 0; k < row->n; k++) {
            const Word *w = &W[row->a[k]];
            if (open && w->x0 <= b) {
                b = w->x1 > b ? w->x1 : b;
                continue;
            }
            if (open) {
                events[ne].x = a; events[ne++].d = 1;
                events[ne].x = b; events[ne++].d = -1;
            }
            a = w->x0;
            b = w->x1;
            open = 1;
        }
        if (open) {
            events[ne].x = a; events[ne++].d = 1;
            events[ne].x = b; events[ne++].d = -1;
        }
    }
    qsort(events, (size_t)ne, sizeof(Event), cmp_event);
    Py_ssize_t allow = nbody / 10, depth = 0;
    double lo = events[0].x, hi = events[ne - 1].x, gap_start = 0;
    int has_start = 0;
    for (Py_ssize_t e = 0; e < ne; e++) {
        double x = events[e].x;
        Py_ssize_t before = depth;
        depth += events[e].d;
        if (before > allow && allow >= depth) {
            gap_start = x;
            has_start = 1;
        } else if (before <= allow && allow < depth && has_start) {
            if (lo < gap_start && x < hi) {
                int ruled = 0;
                for (Py_ssize_t k = 0; k < nrules && !ruled; k++) ruled = gap_start <= rule_xs[k] && rule_xs[k] <= x;
                if (x - gap_start >= min_gap || (ruled && x - gap_start > 0.5)) {
                    PyObject *v = PyFloat_FromDouble((gap_start + x) / 2);
                    if (!v || PyList_Append(out, v) < 0) { Py_XDECREF(v); PyMem_Free(events); return -1; }
                    Py_DECREF(v);
                }
            }
            has_start = 0;
        }
    }
    PyMem_Free(events);
    return 0;
}

/* pdf.tables.region_rows: (rows of words, prose flags, column boundaries, box of the lines inside), or
 * None when the region cannot hold a table (fewer than two lines or two aligned rows, no boundary) */
static PyObject *ls_region_rows(LineSet *s, PyObject *args) {
    unsigned long long addr;
    double rx0, ry0, rx1, ry1;
    PyObject *vrules;
    if (!PyArg_ParseTuple(args, "K(dddd)O!", &addr, &rx0, &ry0, &rx1, &ry1, &PyList_Type, &vrules)) return NULL;
    void *tp = (void *)(uintptr_t)addr;
    IVec inside = {NULL, 0, 0};
    WVec words = {NULL, 0, 0};
    UBuf chars = {NULL, 0, 0};
    Groups rows = {NULL, 0, 0};
    int *order = NULL;
    double *sizes = NULL, *rule_xs = NULL;
    char *prose = NULL;
    PyObject *result = NULL, *bounds = NULL, *rows_py = NULL, *prose_py = NULL;
    for (Py_ssize_t i = 0; i < s->page_lines; i++) {
        CLine *ln = &s->lines[i];
        if (ln->dropped || ln->vertical || ln->start < 0 || ln->table >= 0) continue;
        double mid = (ln->y0 + ln->y1) / 2;
        if (ry0 - 1 <= mid && mid <= ry1 + 1 && ln->x0 >= rx0 - 2 * ln->size && ln->x1 <= rx1 + 2 * ln->size &&
            ivec_push(&inside, (int)i) < 0)
            goto done;
    }
    Py_ssize_t n = inside.n;
    if (n < 2) goto none;
    order = PyMem_Malloc((size_t)n * sizeof(int));
    sizes = PyMem_Malloc((size_t)n * sizeof(double));
    if (!order || !sizes) { PyErr_NoMemory(); goto done; }
    memcpy(order, inside.a, (size_t)n * sizeof(int));
    if (merge_sort(order, n, less_neg_y1, s->lines) < 0) goto done;
    for (Py_ssize_t r0 = 0; r0 < n;) { /* group_rows(inside, max_size_ratio=1.25), then words and sub-rows */
        CLine *first = &s->lines[order[r0]];
        double top = first->y1, bottom = first->y0;
        Py_ssize_t r1 = r0 + 1;
        while (r1 < n) {
            CLine *ln = &s->lines[order[r1]];
            double overlap = (top < ln->y1 ? top : ln->y1) - (bottom > ln->y0 ? bottom : ln->y0);
            double ratio = first->size > 0 ? ln->size / first->size : 1.0;
            double ha = top - bottom, hb = ln->y1 - ln->y0;
            if (1.0 / 1.25 <= ratio && ratio <= 1.25 && overlap >= 0.4 * (hb < ha ? hb : ha)) r1++;
            else break;
        }
        if (merge_sort(order + r0, r1 - r0, less_x0, s->lines) < 0) goto done;
        Py_ssize_t from = words.n;
        for (Py_ssize_t k = r0; k < r1; k++)
            if (line_words(s, tp, &s->lines[order[k]], &words, &chars) < 0) goto done;
        if (split_by_height(words.a, from, words.n, &rows) < 0) goto done;
        r0 = r1;
    }
    for (Py_ssize_t i = 0; i < n; i++) sizes[i] = s->lines[inside.a[i]].size;
    qsort(sizes, (size_t)n, sizeof(double), cmp_double);
    double min_gap = 0.55 * sizes[n / 2];
    prose = PyMem_Malloc((size_t)(rows.n ? rows.n : 1));
    if (!prose) { PyErr_NoMemory(); goto done; }
    Py_ssize_t nbody = 0;
    for (Py_ssize_t r = 0; r < rows.n; r++) {
        prose[r] = (char)is_prose(words.a, &rows.a[r]);
        nbody += !prose[r];
    }
    if (nbody < 2) goto none;
    Py_ssize_t nv = PyList_GET_SIZE(vrules), nrules = 0;
    rule_xs = PyMem_Malloc((size_t)(nv ? nv : 1) * sizeof(double));
    if (!rule_xs) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t k = 0; k < nv; k++) {
        PyObject *v = PyList_GET_ITEM(vrules, k);
        double x = PyFloat_AsDouble(PyTuple_GetItem(v, 0)), a = PyFloat_AsDouble(PyTuple_GetItem(v, 1));
        double b = PyFloat_AsDouble(PyTuple_GetItem(v, 2));
        if (PyErr_Occurred()) goto done;
        double mid = (a + b) / 2;
        if (ry0 - 2 <= mid && mid <= ry1 + 2) rule_xs[nrules++] = x;
    }
    qsort(rule_xs, (size_t)nrules, sizeof(double), cmp_double);
    bounds = PyList_New(0);
    if (!bounds || boundaries(words.a, &rows, prose, min_gap, rule_xs, nrules, bounds) < 0) goto done;
    if (!PyList_GET_SIZE(bounds)) goto none;
    rows_py = PyList_New(rows.n);
    prose_py = PyList_New(rows.n);
    if (!rows_py || !prose_py) goto done;
    for (Py_ssize_t r = 0; r < rows.n; r++) {
        PyObject *row = PyList_New(rows.a[r].n);
        if (!row) goto done;
        PyList_SET_ITEM(rows_py, r, row);
        for (Py_ssize_t k = 0; k < rows.a[r].n; k++) {
            Word *w = &words.a[rows.a[r].a[k]];
            PyObject *text = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, chars.a + w->off, w->len);
            PyObject *t = text ? Py_BuildValue("(Ndddd)", text, w->x0, w->x1, w->y0, w->y1) : NULL;
            if (!t) goto done;
            PyList_SET_ITEM(row, k, t);
        }
        PyObject *flag = prose[r] ? Py_True : Py_False;
        Py_INCREF(flag);
        PyList_SET_ITEM(prose_py, r, flag);
    }
    double bx0 = 0, by0 = 0, bx1 = 0, by1 = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        CLine *ln = &s->lines[inside.a[i]];
        if (!i || ln->x0 < bx0) bx0 = ln->x0;
        if (!i || ln->y0 < by0) by0 = ln->y0;
        if (!i || ln->x1 > bx1) bx1 = ln->x1;
        if (!i || ln->y1 > by1) by1 = ln->y1;
    }
    result = Py_BuildValue("(OOO(dddd))", rows_py, prose_py, bounds, bx0, by0, bx1, by1);
    goto done;
none:
    result = Py_None;
    Py_INCREF(result);
done:
    Py_XDECREF(rows_py);
    Py_XDECREF(prose_py);
    Py_XDECREF(bounds);
    ivec_free(&inside);
    PyMem_Free(words.a);
    PyMem_Free(chars.a);
    groups_free(&rows);
    PyMem_Free(order);
    PyMem_Free(sizes);
    PyMem_Free(rule_xs);
    PyMem_Free(prose);
    return result;
}

/* pdf.tables._inside for every kept line: the lines a found table covers are dropped */
static PyObject *ls_drop_inside(LineSet *s, PyObject *args) {
    double tx0, ty0, tx1, ty1;
    if (!PyArg_ParseTuple(args, "(dddd)", &tx0, &ty0, &tx1, &ty1)) return NULL;
    Py_ssize_t dropped = 0;
    for (Py_ssize_t i = 0; i < s->page_lines; i++) {
        CLine *ln = &s->lines[i];
        if (ln->dropped || ln->table >= 0) continue;
        double mid = (ln->y0 + ln->y1) / 2;
        if (ty0 - 1 <= mid && mid <= ty1 + 1 && ln->x0 >= tx0 - 2 * ln->size && ln->x1 <= tx1 + 2 * ln->size) {
            ln->dropped = 1;
            dropped++;
        }
    }
    return PyLong_FromSsize_t(dropped);
}

/* ---------------------------------------------------------------- graphics (scan_graphics) */

/* pdf.tables._regions: clusters of horizontal rules of about the same extent lying close together */
static PyObject *table_regions(PyObject *hrules) {
    Py_ssize_t n = PyList_GET_SIZE(hrules);
    double *r = PyMem_Malloc((size_t)(n ? n : 1) * 3 * sizeof(double));
    int *order = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(int));
    double *c = PyMem_Malloc((size_t)(n ? n : 1) * 5 * sizeof(double)); /* x0, y0, x1, y1, count */
    PyObject *out = NULL;
    if (!r || !order || !c) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyList_GET_ITEM(hrules, i);
        for (int k = 0; k < 3; k++) r[3 * i + k] = PyFloat_AS_DOUBLE(PyTuple_GET_ITEM(t, k));
        order[i] = (int)i;
    }
    { /* stable sort by -y: insertion into a merge sort over a CLine-free comparator */
        CLine *tmp = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(CLine));
        if (!tmp) { PyErr_NoMemory(); goto done; }
        for (Py_ssize_t i = 0; i < n; i++) tmp[i].y1 = r[3 * i + 2];
        int rc = merge_sort(order, n, less_neg_y1, tmp);
        PyMem_Free(tmp);
        if (rc < 0) goto done;
    }
    Py_ssize_t nc = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        double x0 = r[3 * order[k]], x1 = r[3 * order[k] + 1], y = r[3 * order[k] + 2];
        if (x1 - x0 < 40) continue;
        Py_ssize_t j = 0;
        for (; j < nc; j++) {
            double *q = c + 5 * j;
            double overlap = (q[2] < x1 ? q[2] : x1) - (q[0] > x0 ? q[0] : x0);
            double wide = (q[2] - q[0]) > (x1 - x0) ? (q[2] - q[0]) : (x1 - x0);
            if (overlap >= 0.8 * wide && q[1] - y <= 90) {
                if (q[1] - y > 2.0) q[4] += 1;
                double nx0 = x0 < q[0] ? x0 : q[0], ny0 = y < q[1] ? y : q[1], nx1 = x1 > q[2] ? x1 : q[2];
                q[0] = nx0;
                q[1] = ny0;
                q[2] = nx1;
                break;
            }
        }
        if (j == nc) {
            double *q = c + 5 * nc++;
            q[0] = x0; q[1] = y; q[2] = x1; q[3] = y; q[4] = 1;
        }
    }
    out = PyList_New(0);
    for (Py_ssize_t j = 0; out && j < nc; j++) {
        double *q = c + 5 * j;
        if (q[4] >= 2 && q[3] - q[1] >= 8) {
            PyObject *t = Py_BuildValue("(dddd)", q[0], q[1], q[2], q[3]);
            if (!t || PyList_Append(out, t) < 0) { Py_XDECREF(t); Py_CLEAR(out); break; }
            Py_DECREF(t);
        }
    }
done:
    PyMem_Free(r);
    PyMem_Free(order);
    PyMem_Free(c);
    return out;
}

static PyObject *core_graphics(PyObject *self, PyObject *args) {
    unsigned long long addr;
    double width, height;
    if (!PyArg_ParseTuple(args, "Kdd", &addr, &width, &height)) return NULL;
    if (!F.bound) {
        PyErr_SetString(PyExc_RuntimeError, "_pdfcore.bind() was not called");
        return NULL;
    }
    void *page = (void *)(uintptr_t)addr;
    int count = F.CountObjects(page);
    if (count > 20000) count = 20000;
    PyObject *hr = PyList_New(0), *vr = PyList_New(0);
    if (!hr || !vr) { Py_XDECREF(hr); Py_XDECREF(vr); return NULL; }
    double area = width * height > 1.0 ? width * height : 1.0;
    double covered = 0.0, image_px = 0.0;
    float left = 0, bottom = 0, right = 0, top = 0;
#define PUSH(list, a, b, c)                                          \
    do {                                                             \
        PyObject *t_ = Py_BuildValue("(ddd)", (a), (b), (c));        \
        if (!t_ || PyList_Append((list), t_) < 0) {                  \
            Py_XDECREF(t_);                                          \
            Py_DECREF(hr);                                           \
            Py_DECREF(vr);                                           \
            return NULL;                                             \
        }                                                            \
        Py_DECREF(t_);                                               \
    } while (0)
    for (int i = 0; i < count; i++) {
        void *obj = F.GetObject(page, i);
        int kind = F.GetType(obj);
        if (kind == 1) continue;
        if ((kind != 2 && kind != 3 && kind != 5) || !F.GetBounds(obj, &left, &bottom, &right, &top)) continue;
        double x0 = left, y0 = bottom, x1 = right, y1 = top;
        double w = x1 - x0, h = y1 - y0;
        if (kind == 2) {
            if (h <= 2.5) {
                if (w >= 10) PUSH(hr, x0, x1, (y0 + y1) / 2);
            } else if (w <= 2.5) {
                if (h >= 6) PUSH(vr, (x0 + x1) / 2, y0, y1);
            } else if (w >= 10 && h <= 60 && F.CountSegments(obj) <= 6) {
                PUSH(hr, x0, x1, y0);
                PUSH(hr, x0, x1, y1);
                PUSH(vr, x0, y0, y1);
                PUSH(vr, x1, y0, y1);
            }
            continue;
        }
        double cw = (width < x1 ? width : x1) - (0.0 > x0 ? 0.0 : x0);
        double ch = (height < y1 ? height : y1) - (0.0 > y0 ? 0.0 : y0);
        if (!(cw > 0.0)) cw = 0.0;
        if (!(ch > 0.0)) ch = 0.0;
        covered += cw * ch;
        if (kind == 3 && cw * ch > 0.25 * area) {
            unsigned int pw = 0, ph = 0;
            if (F.ImagePixelSize(obj, &pw, &ph) && w > 0) {
                double px = (double)pw / w;
                if (px > image_px) image_px = px;
            }
        }
    }
#undef PUSH
    double cover = covered / area;
    if (cover > 1.0) cover = 1.0;
    PyObject *regions = table_regions(hr);
    if (!regions) { Py_DECREF(hr); Py_DECREF(vr); return NULL; }
    return Py_BuildValue("(NNddN)", hr, vr, cover, image_px, regions);
}

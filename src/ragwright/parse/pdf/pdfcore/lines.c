/* Phase 1: the lines of a page with geometry and bold (pdf.layout.extract_lines, merge_same_row,
 * _split_segment, read_text). Part of _pdfcore.c. */
/* ---------------------------------------------------------------- phase 1: lines of a page */

static int bold_name(const unsigned char *name) {
    /* bold|black|heavy|demi|medi(?:um)?\b|-md\b|-bd|bd$|cmbx|sfbx|\bbx\d|semibold, ignoring case */
    Py_UCS4 s[130];
    Py_ssize_t n = 0;
    for (; name[n] && n < 128; n++) {
        unsigned char c = name[n];
        s[n] = (c >= 'A' && c <= 'Z') ? (Py_UCS4)(c + 32) : c;
    }
    static const char *plain[] = {"bold", "black", "heavy", "demi", "-bd", "cmbx", "sfbx", "semibold"};
    for (Py_ssize_t p = 0; p < n; p++) {
        for (size_t k = 0; k < sizeof(plain) / sizeof(plain[0]); k++) {
            size_t m = strlen(plain[k]);
            if (p + (Py_ssize_t)m <= n) {
                size_t q = 0;
                while (q < m && s[p + q] == (Py_UCS4)plain[k][q]) q++;
                if (q == m) return 1;
            }
        }
        if (p + 4 <= n && s[p] == 'm' && s[p + 1] == 'e' && s[p + 2] == 'd' && s[p + 3] == 'i') {
            if (p + 6 <= n && s[p + 4] == 'u' && s[p + 5] == 'm' && (p + 6 == n || !is_word(s[p + 6]))) return 1;
            if (p + 4 == n || !is_word(s[p + 4])) return 1;
        }
        if (p + 3 <= n && s[p] == '-' && s[p + 1] == 'm' && s[p + 2] == 'd' && (p + 3 == n || !is_word(s[p + 3])))
            return 1;
        if (p + 3 <= n && s[p] == 'b' && s[p + 1] == 'x' && Py_UNICODE_ISDECIMAL(s[p + 2]) &&
            (p == 0 || !is_word(s[p - 1])))
            return 1;
    }
    if (n >= 2 && s[n - 2] == 'b' && s[n - 1] == 'd') return 1;
    if (n >= 3 && s[n - 3] == 'b' && s[n - 2] == 'd' && s[n - 1] == '\n') return 1;
    return 0;
}

static int is_bold(void *tp, int index, unsigned char *font) {
    if (F.GetFontWeight(tp, index) >= 600) return 1;
    int flags = 0;
    if (!F.GetFontInfo(tp, index, font, 128, &flags)) return 0;
    return bold_name(font);
}

static double line_size(Py_UCS4 first, double h1, Py_UCS4 last, double h2) {
    int a = is_alnum(first), b = is_alnum(last);
    if (a && !b) return h1 < 0.1 ? 0.1 : h1;
    if (b && !a) return h2 < 0.1 ? 0.1 : h2;
    double m = h2 > h1 ? h2 : h1;
    return 0.1 > m ? 0.1 : m;
}

/* merge_same_row: consecutive pieces of one visual line joined in place; returns the new count */
static int merge_same_row(LineSet *s) {
    Py_ssize_t out = 0;
    for (Py_ssize_t i = 0; i < s->nlines; i++) {
        CLine ln = s->lines[i];
        if (out && !ln.vertical) {
            CLine *prev = &s->lines[out - 1];
            double ha = prev->y1 - prev->y0, hb = ln.y1 - ln.y0;
            double h = hb < ha ? hb : ha;
            double gap = ln.x0 - prev->x1;
            double big = ln.size > prev->size ? ln.size : prev->size;
            double top = ln.y1 < prev->y1 ? ln.y1 : prev->y1;
            double bottom = ln.y0 > prev->y0 ? ln.y0 : prev->y0;
            if (!prev->vertical && !prev->hyphen && top - bottom >= 0.5 * h && -0.3 * big <= gap && gap <= 1.2 * big) {
                int sep = !(gap < 0.12 * big);
                Py_ssize_t off = s->arena.n;
                if (ubuf_reserve(&s->arena, prev->len + sep + ln.len) < 0) return -1;
                memcpy(s->arena.a + off, s->arena.a + prev->off, (size_t)prev->len * sizeof(Py_UCS4));
                s->arena.n += prev->len;
                if (sep) s->arena.a[s->arena.n++] = ' ';
                memcpy(s->arena.a + s->arena.n, s->arena.a + ln.off, (size_t)ln.len * sizeof(Py_UCS4));
                s->arena.n += ln.len;
                prev->off = off;
                prev->len = prev->len + sep + ln.len;
                if (ln.len > prev->len - ln.len) prev->size = ln.size;
                if (ln.x1 > prev->x1) prev->x1 = ln.x1;
                if (ln.y0 < prev->y0) prev->y0 = ln.y0;
                if (ln.y1 > prev->y1) prev->y1 = ln.y1;
                prev->end = ln.end;
                prev->hyphen = ln.hyphen;
                prev->bold = prev->bold && (ln.bold || ln.len <= 2);
                continue;
            }
        }
        s->lines[out++] = ln;
    }
    s->nlines = out;
    return 0;
}


static void loose_box(void *tp, int index, RectF *rect, double *l, double *b, double *r, double *t) {
    F.GetLooseCharBox(tp, index, rect);
    *l = rect->left;
    *r = rect->right;
    if (rect->top >= rect->bottom) { *b = rect->bottom; *t = rect->top; }
    else { *b = rect->top; *t = rect->bottom; }
}

static CLine new_line(void) {
    CLine ln;
    memset(&ln, 0, sizeof(ln));
    ln.table = -1;
    return ln;
}

/* _line_from_chars: text of the characters idx[0..m) (strip, rstrip U+FFFE, U+FFFE -> "-") */
static int line_from_chars(LineSet *s, void *tp, const int *idx, Py_ssize_t m, RectF *rect) {
    double la, ba, ra, ta, lb, bb, rb, tb;
    loose_box(tp, idx[0], rect, &la, &ba, &ra, &ta);
    loose_box(tp, idx[m - 1], rect, &lb, &bb, &rb, &tb);
    Py_ssize_t a = 0, b = m;
    while (a < b && is_space(s->text[idx[a]])) a++;
    while (b > a && is_space(s->text[idx[b - 1]])) b--;
    while (b > a && s->text[idx[b - 1]] == 0xfffe) b--;
    CLine ln = new_line();
    ln.off = s->arena.n;
    ln.len = b - a;
    if (ubuf_reserve(&s->arena, ln.len) < 0) return -1;
    for (Py_ssize_t k = a; k < b; k++) {
        Py_UCS4 c = s->text[idx[k]];
        s->arena.a[s->arena.n++] = c == 0xfffe ? '-' : c;
    }
    double ha = ta - ba, hb = tb - bb;
    ln.size = hb > ha ? hb : ha;
    ln.x0 = lb < la ? lb : la;
    ln.y0 = bb < ba ? bb : ba;
    ln.x1 = rb > ra ? rb : ra;
    ln.y1 = tb > ta ? tb : ta;
    ln.start = idx[0];
    ln.end = idx[m - 1];
    return add_line(s, &ln);
}

/* _split_segment: a segment that is vertical or spans several visual lines, character by character */
static int split_segment(LineSet *s, void *tp, int start, int last, int hyphen) {
    RectF rect = {0, 0, 0, 0};
    double angle = F.GetCharAngle(tp, start);
    if (fabs(sin(angle)) > 0.5) {
        double la, ba, ra, ta, lb, bb, rb, tb;
        loose_box(tp, start, &rect, &la, &ba, &ra, &ta);
        loose_box(tp, last, &rect, &lb, &bb, &rb, &tb);
        Py_ssize_t a = start, b = (Py_ssize_t)last + 1;
        while (a < b && is_space(s->text[a])) a++;
        while (b > a && is_space(s->text[b - 1])) b--;
        while (b > a && s->text[b - 1] == 0xfffe) b--;
        CLine ln = new_line();
        ln.off = s->arena.n;
        ln.len = b - a;
        if (ubuf_put(&s->arena, s->text + a, ln.len) < 0) return -1;
        ln.x0 = lb < la ? lb : la;
        ln.x1 = rb > ra ? rb : ra;
        ln.y0 = bb < ba ? bb : ba;
        ln.y1 = tb > ta ? tb : ta;
        ln.size = ln.x1 - ln.x0;
        ln.start = start;
        ln.end = last;
        ln.vertical = 1;
        return add_line(s, &ln);
    }
    Py_ssize_t first_new = s->nlines;
    IVec cur = {NULL, 0, 0};
    double cy0 = 0, cy1 = 0;
    for (int i = start; i <= last; i++) {
        if (s->text[i] == '\r' || s->text[i] == '\n') continue;
        double l, b, r, t;
        loose_box(tp, i, &rect, &l, &b, &r, &t);
        double mid = (b + t) / 2;
        if (cur.n && !(cy0 <= mid && mid <= cy1)) {
            if (line_from_chars(s, tp, cur.a, cur.n, &rect) < 0) { ivec_free(&cur); return -1; }
            cur.n = 0;
        }
        if (!cur.n) { cy0 = b; cy1 = t; }
        if (ivec_push(&cur, i) < 0) { ivec_free(&cur); return -1; }
    }
    if (cur.n && line_from_chars(s, tp, cur.a, cur.n, &rect) < 0) { ivec_free(&cur); return -1; }
    ivec_free(&cur);
    Py_ssize_t keep = first_new;
    for (Py_ssize_t k = first_new; k < s->nlines; k++)
        if (s->lines[k].len) s->lines[keep++] = s->lines[k];
    s->nlines = keep;
    if (keep > first_new) s->lines[keep - 1].hyphen = (char)hyphen;
    return 0;
}

/* Returns 1 when the page needs the Python path, 0 when done, -1 on error. */
static int extract_lines(LineSet *s, void *tp) {
    const Py_UCS4 *text = s->text;
    Py_ssize_t n = s->nchars;
    for (Py_ssize_t i = 0; i < n; i++)
        if (is_rtl(text[i])) return 1;
    RectF rect = {0, 0, 0, 0};
    unsigned char font[130];
    memset(font, 0, sizeof(font));
    Py_ssize_t i = 0;
    while (i < n) {
        Py_UCS4 c = text[i];
        if (c == '\r' || c == '\n' || c == 0xfffe) { i++; continue; }
        Py_ssize_t j = i;
        while (j < n && text[j] != '\r' && text[j] != '\n' && text[j] != 0xfffe) j++;
        Py_ssize_t end = (j < n && text[j] == 0xfffe) ? j + 1 : j; /* segment [i, end) */
        Py_ssize_t a = i, b = end;
        i = end;
        while (a < b && is_space(text[a])) a++;
        while (b > a && is_space(text[b - 1])) b--;
        if (a == b || (b - a == 1 && text[a] == 0xfffe)) continue;
        int start = (int)a, last = (int)(b - 1);
        F.GetLooseCharBox(tp, start, &rect);
        double l1 = rect.left, r1 = rect.right, b1 = rect.bottom, t1 = rect.top;
        double l2, r2, b2, t2;
        if (last != start) {
            F.GetLooseCharBox(tp, last, &rect);
            l2 = rect.left; r2 = rect.right; b2 = rect.bottom; t2 = rect.top;
        } else {
            l2 = l1; r2 = r1; b2 = b1; t2 = t1;
        }
        if (t1 < b1 || t2 < b2) {
            /* Python's min(b, t) returns b unless t < b; max(b, t) returns b unless t > b */
            double nb1 = t1 < b1 ? t1 : b1, nt1 = t1 > b1 ? t1 : b1;
            double nb2 = t2 < b2 ? t2 : b2, nt2 = t2 > b2 ? t2 : b2;
            b1 = nb1; t1 = nt1; b2 = nb2; t2 = nt2;
        }
        double h1 = t1 - b1, h2 = t2 - b2;
        double size = h1 >= h2 ? h1 : h2;
        Py_UCS4 first = text[a], lastc = text[b - 1];
        if (!(is_alnum(first) && is_alnum(lastc))) size = line_size(first, h1, lastc, h2);
        if ((t1 < t2 ? t1 : t2) - (b1 > b2 ? b1 : b2) < -0.3 * size) {
            /* the two ends are not on one visual line: rotated text, or a line pdfium did not break */
            if (split_segment(s, tp, start, last, lastc == 0xfffe) < 0) return -1;
            continue;
        }
        int hyphen = lastc == 0xfffe;
        Py_ssize_t body_end = b;
        if (hyphen) {
            body_end = b - 1;
            while (body_end > a && is_space(text[body_end - 1])) body_end--;
        }
        CLine ln;
        ln.x0 = l1 < l2 ? l1 : l2;
        ln.y0 = b1 < b2 ? b1 : b2;
        ln.x1 = r1 > r2 ? r1 : r2;
        ln.y1 = t1 > t2 ? t1 : t2;
        ln.size = size;
        ln.start = start;
        ln.end = last;
        ln.hyphen = (char)hyphen;
        ln.bold = 0;
        ln.dropped = 0;
        ln.vertical = 0;
        ln.table = -1;
        ln.off = s->arena.n;
        ln.len = body_end - a;
        if (ubuf_put(&s->arena, text + a, ln.len) < 0) return -1;
        if (ln.len <= 80 && (Py_UNICODE_ISUPPER(text[a]) || Py_UNICODE_ISDIGIT(text[a])))
            ln.bold = (char)is_bold(tp, start, font);
        if (add_line(s, &ln) < 0) return -1;
    }
    if (merge_same_row(s) < 0) return -1;
    s->page_lines = s->nlines;
    return 0;
}

static PyObject *core_extract(PyObject *self, PyObject *args) {
    unsigned long long addr;
    if (!PyArg_ParseTuple(args, "K", &addr)) return NULL;
    if (!F.bound) {
        PyErr_SetString(PyExc_RuntimeError, "_pdfcore.bind() was not called");
        return NULL;
    }
    void *tp = (void *)(uintptr_t)addr;
    int count = F.CountChars(tp);
    LineSet *s = PyObject_New(LineSet, &LineSetType);
    if (!s) return NULL;
    s->blocks = NULL;
    s->nblocks = s->bcap = 0;
    s->text = NULL;
    s->nchars = 0;
    s->lines = NULL;
    s->nlines = s->cap = s->page_lines = 0;
    s->arena.a = NULL;
    s->arena.n = s->arena.cap = 0;
    if (count <= 0) return (PyObject *)s;
    unsigned short *buf = PyMem_Calloc((size_t)(2 * count + 1), sizeof(unsigned short));
    if (!buf) { Py_DECREF(s); return PyErr_NoMemory(); }
    int written = F.GetText(tp, 0, count, buf);
    Py_ssize_t n = written - 1 > 0 ? written - 1 : 0;
    s->text = PyMem_Malloc((size_t)(n > count ? n : count) * sizeof(Py_UCS4) + sizeof(Py_UCS4));
    if (!s->text) { PyMem_Free(buf); Py_DECREF(s); return PyErr_NoMemory(); }
    /* read_text: UTF-16 decoded as Python does (pairs joined, lone surrogates -> U+FFFD) */
    Py_ssize_t m = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned int u = buf[i];
        if (u >= 0xd800 && u <= 0xdbff && i + 1 < n && buf[i + 1] >= 0xdc00 && buf[i + 1] <= 0xdfff) {
            s->text[m++] = 0x10000 + ((u - 0xd800) << 10) + (buf[i + 1] - 0xdc00);
            i++;
        } else {
            s->text[m++] = (u >= 0xd800 && u <= 0xdfff) ? 0xfffd : u;
        }
    }
    PyMem_Free(buf);
    if (m != count) { /* characters pdfium leaves out of the text: rebuilt one by one */
        for (int i = 0; i < count; i++) {
            unsigned int u = F.GetUnicode(tp, i);
            if (u > 0x10ffff) { Py_DECREF(s); Py_RETURN_NONE; } /* chr() refuses it: the Python path reports */
            s->text[i] = u ? u : 0xfffd;
        }
        m = count;
    }
    s->nchars = m;
    int blank = 1;
    for (Py_ssize_t i = 0; i < m && blank; i++)
        if (!is_space(s->text[i])) blank = 0;
    if (blank) return (PyObject *)s;
    int r = extract_lines(s, tp);
    if (r < 0) { Py_DECREF(s); return NULL; }
    if (r > 0) { Py_DECREF(s); Py_RETURN_NONE; }
    return (PyObject *)s;
}

/*
 * ragwright.parse._pdfcore: the per-line hot path of PDF parsing in C.
 *
 * The pure-Python modules pdf_layout.py (lines with geometry, bold), pdf_order.py (reading order,
 * paragraphs, de-hyphenation) and pdf_tables.scan_graphics (rules, image coverage) are the
 * reference; this file computes the same results with the same double-precision arithmetic and the
 * same stable orderings, calling pdfium through the function pointers pypdfium2 already loaded
 * (bind()). A page this file does not handle -- right-to-left text, characters outside the BMP,
 * text pdfium did not break into lines, vertical text -- makes extract() return None and the page
 * takes the Python path; tests/parse/test_pdfcore.py proves both paths give identical documents.
 *
 * Compiled at install time when a C compiler is present (hatch_build.py); without it ragwright
 * uses the Python modules, which are about twice as slow on text-heavy PDFs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <math.h>

typedef struct { float left, top, right, bottom; } RectF;

static struct {
    int (*CountChars)(void *);
    int (*GetText)(void *, int, int, unsigned short *);
    int (*GetLooseCharBox)(void *, int, RectF *);
    int (*GetFontWeight)(void *, int);
    float (*GetCharAngle)(void *, int);
    unsigned int (*GetUnicode)(void *, int);
    unsigned long (*GetFontInfo)(void *, int, void *, unsigned long, int *);
    int (*CountObjects)(void *);
    void *(*GetObject)(void *, int);
    int (*GetType)(void *);
    int (*GetBounds)(void *, float *, float *, float *, float *);
    int (*CountSegments)(void *);
    int (*ImagePixelSize)(void *, unsigned int *, unsigned int *);
    int bound;
} F;

/* ---------------------------------------------------------------- character classes (as Python's) */

static int is_space(Py_UCS4 c) { return Py_UNICODE_ISSPACE(c); }
static int is_alnum(Py_UCS4 c) { return Py_UNICODE_ISALNUM(c); }
static int is_word(Py_UCS4 c) { return Py_UNICODE_ISALNUM(c) || c == '_'; }

static int is_rtl(Py_UCS4 c) {
    return (c >= 0x0590 && c <= 0x08ff) || (c >= 0xfb1d && c <= 0xfdff) || (c >= 0xfe70 && c <= 0xfefc);
}

static int is_cjk(Py_UCS4 c) {
    return (c >= 0x3040 && c <= 0x30ff) || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x4e00 && c <= 0x9fff) ||
           (c >= 0xac00 && c <= 0xd7af) || (c >= 0xff00 && c <= 0xffef) || (c >= 0x3000 && c <= 0x303f);
}

static int is_control(Py_UCS4 c) {
    return c <= 0x08 || (c >= 0x0b && c <= 0x1f) || c == 0x7f || (c >= 0xe000 && c <= 0xf8ff);
}

static int is_bullet_glyph(Py_UCS4 c) {
    switch (c) {
    case 0x2022: case 0x25cf: case 0x25cb: case 0x25e6: case 0x25aa: case 0x25a0:
    case 0x25a1: case 0x2023: case 0x25ba: case 0x25b8: case 0x2713: case 0x2714:
        return 1;
    default:
        return 0;
    }
}

static int is_sentence_end(Py_UCS4 c) {
    return c == '.' || c == '!' || c == '?' || c == ':' || c == ';' || c == 0x3002 || c == 0xff01 || c == 0xff1f;
}

/* ---------------------------------------------------------------- growable arrays */

typedef struct { Py_UCS4 *a; Py_ssize_t n, cap; } UBuf;

static int ubuf_reserve(UBuf *b, Py_ssize_t extra) {
    if (b->n + extra <= b->cap) return 0;
    Py_ssize_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + extra) cap *= 2;
    Py_UCS4 *a = PyMem_Realloc(b->a, (size_t)cap * sizeof(Py_UCS4));
    if (!a) { PyErr_NoMemory(); return -1; }
    b->a = a;
    b->cap = cap;
    return 0;
}

static int ubuf_put(UBuf *b, const Py_UCS4 *s, Py_ssize_t n) {
    if (ubuf_reserve(b, n) < 0) return -1;
    memcpy(b->a + b->n, s, (size_t)n * sizeof(Py_UCS4));
    b->n += n;
    return 0;
}

static int ubuf_putc(UBuf *b, Py_UCS4 c) { return ubuf_put(b, &c, 1); }

typedef struct { int *a; Py_ssize_t n, cap; } IVec;

static int ivec_push(IVec *v, int x) {
    if (v->n == v->cap) {
        Py_ssize_t cap = v->cap ? v->cap * 2 : 16;
        int *a = PyMem_Realloc(v->a, (size_t)cap * sizeof(int));
        if (!a) { PyErr_NoMemory(); return -1; }
        v->a = a;
        v->cap = cap;
    }
    v->a[v->n++] = x;
    return 0;
}

static void ivec_free(IVec *v) { PyMem_Free(v->a); v->a = NULL; v->n = v->cap = 0; }

/* ---------------------------------------------------------------- lines */

typedef struct {
    double x0, y0, x1, y1, size;
    int start, end;
    char hyphen, bold, dropped, vertical;
    Py_ssize_t off, len; /* text in the arena */
} CLine;

/* a block of the page in reading order; text is the block's text, stripped (empty blocks are not kept) */
typedef struct {
    PyObject *text;
    double size, top;
    char list_item, heading; /* heading: 0 none, 1 by size, 2 by bold (pdf._heading_kind) */
} CBlock;

typedef struct {
    PyObject_HEAD
    CBlock *blocks;
    Py_ssize_t nblocks, bcap;
    Py_UCS4 *text; /* the page text, one code point per pdfium character */
    Py_ssize_t nchars;
    CLine *lines;
    Py_ssize_t nlines, cap, page_lines; /* page_lines: lines of the page; later ones are joined rows */
    UBuf arena;
} LineSet;

static int add_line(LineSet *s, const CLine *ln) {
    if (s->nlines == s->cap) {
        Py_ssize_t cap = s->cap ? s->cap * 2 : 64;
        CLine *a = PyMem_Realloc(s->lines, (size_t)cap * sizeof(CLine));
        if (!a) { PyErr_NoMemory(); return -1; }
        s->lines = a;
        s->cap = cap;
    }
    s->lines[s->nlines++] = *ln;
    return 0;
}

#define TXT(s, ln) ((s)->arena.a + (ln)->off)

/* ---------------------------------------------------------------- stable merge sort of indices */

typedef int (*LessFn)(const void *ctx, int a, int b);

static int merge_sort(int *a, Py_ssize_t n, LessFn less, const void *ctx) {
    if (n < 2) return 0;
    int *tmp = PyMem_Malloc((size_t)n * sizeof(int));
    if (!tmp) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t width = 1; width < n; width *= 2) {
        for (Py_ssize_t lo = 0; lo < n; lo += 2 * width) {
            Py_ssize_t mid = lo + width < n ? lo + width : n;
            Py_ssize_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            Py_ssize_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) tmp[k++] = less(ctx, a[j], a[i]) ? a[j++] : a[i++];
            while (i < mid) tmp[k++] = a[i++];
            while (j < hi) tmp[k++] = a[j++];
        }
        memcpy(a, tmp, (size_t)n * sizeof(int));
    }
    PyMem_Free(tmp);
    return 0;
}

static int less_neg_y1(const void *ctx, int a, int b) {
    const CLine *L = ctx;
    return -L[a].y1 < -L[b].y1;
}

static int less_x0(const void *ctx, int a, int b) {
    const CLine *L = ctx;
    return L[a].x0 < L[b].x0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct { double x; int d; } Event;

static int cmp_event(const void *a, const void *b) {
    const Event *p = a, *q = b;
    if (p->x != q->x) return (p->x > q->x) - (p->x < q->x);
    return (p->d > q->d) - (p->d < q->d);
}

typedef struct { double a, b; } Pair;

static int cmp_pair(const void *a, const void *b) {
    const Pair *p = a, *q = b;
    if (p->a != q->a) return (p->a > q->a) - (p->a < q->a);
    return (p->b > q->b) - (p->b < q->b);
}

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

static PyTypeObject LineSetType;

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

/* ---------------------------------------------------------------- phase 2: reading order */

static int find_gutters(LineSet *s, const IVec *flat, Pair **out, Py_ssize_t *nout) {
    *out = NULL;
    *nout = 0;
    Py_ssize_t n = flat->n;
    if (n < 6) return 0;
    CLine *L = s->lines;
    double left = L[flat->a[0]].x0, right = L[flat->a[0]].x1;
    for (Py_ssize_t i = 1; i < n; i++) {
        CLine *ln = &L[flat->a[i]];
        if (ln->x0 < left) left = ln->x0;
        if (ln->x1 > right) right = ln->x1;
    }
    double width = right - left;
    if (width <= 0) return 0;
    Pair *narrow = PyMem_Malloc((size_t)n * sizeof(Pair));
    double *sizes = PyMem_Malloc((size_t)n * sizeof(double));
    Event *events = PyMem_Malloc((size_t)(2 * n) * sizeof(Event));
    Pair *gaps = PyMem_Malloc((size_t)(n + 1) * sizeof(Pair));
    Pair *gut = PyMem_Malloc((size_t)(n + 1) * sizeof(Pair));
    if (!narrow || !sizes || !events || !gaps || !gut) {
        PyMem_Free(narrow); PyMem_Free(sizes); PyMem_Free(events); PyMem_Free(gaps); PyMem_Free(gut);
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t nn = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        CLine *ln = &L[flat->a[i]];
        sizes[i] = ln->size;
        if (ln->x1 - ln->x0 < 0.6 * width) {
            narrow[nn].a = ln->x0;
            narrow[nn].b = ln->x1;
            nn++;
        }
    }
    Py_ssize_t ngut = 0;
    if (nn >= 6) {
        qsort(narrow, (size_t)nn, sizeof(Pair), cmp_pair);
        qsort(sizes, (size_t)n, sizeof(double), cmp_double);
        double min_gap = 0.6 * sizes[n / 2];
        if (min_gap < 4.0) min_gap = 4.0;
        Py_ssize_t allow = nn / 10;
        Py_ssize_t ne = 0;
        for (Py_ssize_t i = 0; i < nn; i++) { events[ne].x = narrow[i].a; events[ne].d = 1; ne++; }
        for (Py_ssize_t i = 0; i < nn; i++) { events[ne].x = narrow[i].b; events[ne].d = -1; ne++; }
        qsort(events, (size_t)ne, sizeof(Event), cmp_event);
        /* _coverage_gaps */
        Py_ssize_t ngaps = 0, depth = 0;
        int has_start = 0;
        double start = 0;
        for (Py_ssize_t e = 0; e < ne; e++) {
            double x = events[e].x;
            Py_ssize_t before = depth;
            depth += events[e].d;
            if (before > allow && allow >= depth) {
                start = x;
                has_start = 1;
            } else if (before <= allow && allow < depth && has_start) {
                if (x - start >= min_gap) {
                    /* _narrowest(events, start, x) */
                    double lo = start, hi = x, prev_x = lo;
                    Py_ssize_t d = 0, best_depth = (Py_ssize_t)1 << 30;
                    Pair best = {lo, hi};
                    for (Py_ssize_t k = 0; k < ne; k++) {
                        double xx = events[k].x;
                        if (xx > lo && prev_x < hi) {
                            double aa = lo > prev_x ? lo : prev_x, bb = hi < xx ? hi : xx;
                            if (bb > aa && (d < best_depth || (d == best_depth && bb - aa > best.b - best.a))) {
                                best_depth = d;
                                best.a = aa;
                                best.b = bb;
                            }
                        }
                        d += events[k].d;
                        prev_x = xx;
                    }
                    gaps[ngaps++] = best;
                }
                has_start = 0;
            }
        }
        for (Py_ssize_t g = 0; g < ngaps; g++) {
            double ga = gaps[g].a, gb = gaps[g].b;
            Py_ssize_t nl = 0, nr = 0;
            double l_top = 0, l_bot = 0, r_top = 0, r_bot = 0;
            for (Py_ssize_t i = 0; i < n; i++) {
                CLine *ln = &L[flat->a[i]];
                if (ln->x1 <= ga + 1.0) {
                    if (!nl || ln->y1 > l_top) l_top = ln->y1;
                    if (!nl || ln->y0 < l_bot) l_bot = ln->y0;
                    nl++;
                }
                if (ln->x0 >= gb - 1.0) {
                    if (!nr || ln->y1 > r_top) r_top = ln->y1;
                    if (!nr || ln->y0 < r_bot) r_bot = ln->y0;
                    nr++;
                }
            }
            if (nl < 3 || nr < 3 || (double)(nl + nr) < 0.5 * (double)n) continue;
            double overlap = (l_top < r_top ? l_top : r_top) - (l_bot > r_bot ? l_bot : r_bot);
            double hl = l_top - l_bot, hr = r_top - r_bot;
            if (overlap < 0.3 * (hr < hl ? hr : hl)) continue;
            gut[ngut++] = gaps[g];
        }
    }
    PyMem_Free(narrow);
    PyMem_Free(sizes);
    PyMem_Free(events);
    PyMem_Free(gaps);
    if (!ngut) {
        PyMem_Free(gut);
        return 0;
    }
    *out = gut;
    *nout = ngut;
    return 0;
}

/* group_rows + _join_row: the rows of `lines` (top to bottom) joined into single lines */
static int sort_rows(LineSet *s, IVec *lines, IVec *out) {
    Py_ssize_t n = lines->n;
    int sorted = 1;
    for (Py_ssize_t i = 0; i + 1 < n; i++) {
        CLine *a = &s->lines[lines->a[i]], *b = &s->lines[lines->a[i + 1]];
        if ((b->y0 + b->y1) / 2 >= a->y0) { sorted = 0; break; }
    }
    if (n < 2 || sorted) {
        for (Py_ssize_t i = 0; i < n; i++)
            if (ivec_push(out, lines->a[i]) < 0) return -1;
        return 0;
    }
    int *order = PyMem_Malloc((size_t)n * sizeof(int));
    if (!order) { PyErr_NoMemory(); return -1; }
    memcpy(order, lines->a, (size_t)n * sizeof(int));
    if (merge_sort(order, n, less_neg_y1, s->lines) < 0) { PyMem_Free(order); return -1; }
    Py_ssize_t r0 = 0;
    while (r0 < n) {
        CLine *first = &s->lines[order[r0]];
        double top = first->y1, bottom = first->y0;
        Py_ssize_t r1 = r0 + 1;
        while (r1 < n) {
            CLine *ln = &s->lines[order[r1]];
            double overlap = (top < ln->y1 ? top : ln->y1) - (bottom > ln->y0 ? bottom : ln->y0);
            double ha = top - bottom, hb = ln->y1 - ln->y0;
            if (overlap >= 0.4 * (hb < ha ? hb : ha)) r1++;
            else break;
        }
        int *row = order + r0;
        Py_ssize_t m = r1 - r0;
        if (merge_sort(row, m, less_x0, s->lines) < 0) { PyMem_Free(order); return -1; }
        if (m == 1) {
            if (ivec_push(out, row[0]) < 0) { PyMem_Free(order); return -1; }
        } else {
            int main_i = row[0];
            for (Py_ssize_t k = 1; k < m; k++)
                if (s->lines[row[k]].len > s->lines[main_i].len) main_i = row[k];
            CLine joined;
            CLine *mainl = &s->lines[main_i];
            double msize = mainl->size;
            Py_ssize_t off = s->arena.n;
            double x1 = s->lines[row[0]].x1;
            int start = s->lines[row[0]].start, end = s->lines[row[0]].end;
            for (Py_ssize_t k = 0; k < m; k++) {
                CLine *ln = &s->lines[row[k]];
                if (k) {
                    CLine *prev = &s->lines[row[k - 1]];
                    if (!(ln->x0 - prev->x1 < 0.12 * msize) && ubuf_putc(&s->arena, ' ') < 0) {
                        PyMem_Free(order);
                        return -1;
                    }
                    if (ln->x1 > x1) x1 = ln->x1;
                    if (ln->start < start) start = ln->start;
                    if (ln->end > end) end = ln->end;
                }
                /* the arena may move: copy through an index, not a pointer */
                Py_ssize_t loff = ln->off, llen = ln->len;
                if (ubuf_reserve(&s->arena, llen) < 0) { PyMem_Free(order); return -1; }
                memcpy(s->arena.a + s->arena.n, s->arena.a + loff, (size_t)llen * sizeof(Py_UCS4));
                s->arena.n += llen;
            }
            mainl = &s->lines[main_i];
            joined.x0 = s->lines[row[0]].x0;
            joined.y0 = mainl->y0;
            joined.x1 = x1;
            joined.y1 = mainl->y1;
            joined.size = mainl->size;
            joined.start = start;
            joined.end = end;
            joined.hyphen = s->lines[row[m - 1]].hyphen;
            joined.bold = mainl->bold;
            joined.dropped = 0;
            joined.vertical = 0;
            joined.off = off;
            joined.len = s->arena.n - off;
            if (add_line(s, &joined) < 0 || ivec_push(out, (int)(s->nlines - 1)) < 0) {
                PyMem_Free(order);
                return -1;
            }
        }
        r0 = r1;
    }
    PyMem_Free(order);
    return 0;
}

static int is_line_numbers(LineSet *s, IVec *g) {
    if (g->n < 5) return 0;
    for (Py_ssize_t i = 0; i < g->n; i++) {
        CLine *ln = &s->lines[g->a[i]];
        if (ln->len < 1 || ln->len > 3) return 0;
        for (Py_ssize_t k = 0; k < ln->len; k++)
            if (!Py_UNICODE_ISDECIMAL(TXT(s, ln)[k])) return 0;
    }
    return 1;
}

typedef struct { IVec *a; Py_ssize_t n, cap; } Groups;

static int groups_add(Groups *g, IVec v) {
    if (g->n == g->cap) {
        Py_ssize_t cap = g->cap ? g->cap * 2 : 8;
        IVec *a = PyMem_Realloc(g->a, (size_t)cap * sizeof(IVec));
        if (!a) { PyErr_NoMemory(); return -1; }
        g->a = a;
        g->cap = cap;
    }
    g->a[g->n++] = v;
    return 0;
}

static void groups_free(Groups *g) {
    for (Py_ssize_t i = 0; i < g->n; i++) ivec_free(&g->a[i]);
    PyMem_Free(g->a);
    g->a = NULL;
    g->n = g->cap = 0;
}

static int add_sorted_group(LineSet *s, Groups *groups, IVec *lines) {
    IVec out = {NULL, 0, 0};
    if (sort_rows(s, lines, &out) < 0 || groups_add(groups, out) < 0) { ivec_free(&out); return -1; }
    return 0;
}

static int reading_groups(LineSet *s, IVec *flat, Groups *groups) {
    Pair *gut;
    Py_ssize_t ng;
    if (find_gutters(s, flat, &gut, &ng) < 0) return -1;
    if (!ng) {
        if (flat->n) return add_sorted_group(s, groups, flat);
        return 0;
    }
    int rc = -1;
    double *mids = PyMem_Malloc((size_t)ng * sizeof(double));
    int *order = PyMem_Malloc((size_t)(flat->n ? flat->n : 1) * sizeof(int));
    IVec *band = PyMem_Calloc((size_t)(ng + 1), sizeof(IVec)); /* columns 0..ng */
    IVec spanning = {NULL, 0, 0};
    if (!mids || !order || !band) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t g = 0; g < ng; g++) mids[g] = (gut[g].a + gut[g].b) / 2;
    memcpy(order, flat->a, (size_t)flat->n * sizeof(int));
    if (merge_sort(order, flat->n, less_neg_y1, s->lines) < 0) goto done;
    for (Py_ssize_t i = 0; i < flat->n; i++) {
        CLine *ln = &s->lines[order[i]];
        Py_ssize_t col = -2;
        for (Py_ssize_t g = 0; g < ng; g++) {
            double ga = gut[g].a, gb = gut[g].b, mid = mids[g];
            if (ln->x0 >= ga - 1.0 && ln->x1 <= gb + 1.0) { col = -1; break; }
            if (ln->x0 < mid && mid < ln->x1 && mid - ln->x0 > 2 * ln->size && ln->x1 - mid > 2 * ln->size) {
                col = -1;
                break;
            }
        }
        if (col == -2) {
            double c = (ln->x0 + ln->x1) / 2;
            col = 0;
            while (col < ng && !(c < mids[col])) col++; /* bisect_right */
        }
        if (col < 0) {
            for (Py_ssize_t k = 0; k <= ng; k++) {
                if (band[k].n) {
                    if (add_sorted_group(s, groups, &band[k]) < 0) goto done;
                    band[k].n = 0;
                }
            }
            if (ivec_push(&spanning, order[i]) < 0) goto done;
        } else {
            if (spanning.n) {
                if (add_sorted_group(s, groups, &spanning) < 0) goto done;
                spanning.n = 0;
            }
            if (ivec_push(&band[col], order[i]) < 0) goto done;
        }
    }
    for (Py_ssize_t k = 0; k <= ng; k++) {
        if (band[k].n) {
            if (add_sorted_group(s, groups, &band[k]) < 0) goto done;
            band[k].n = 0;
        }
    }
    if (spanning.n && add_sorted_group(s, groups, &spanning) < 0) goto done;
    {
        Py_ssize_t keep = 0;
        for (Py_ssize_t g = 0; g < groups->n; g++) {
            if (is_line_numbers(s, &groups->a[g])) ivec_free(&groups->a[g]);
            else groups->a[keep++] = groups->a[g];
        }
        groups->n = keep;
    }
    rc = 0;
done:
    if (band)
        for (Py_ssize_t k = 0; k <= ng; k++) ivec_free(&band[k]);
    PyMem_Free(band);
    ivec_free(&spanning);
    PyMem_Free(mids);
    PyMem_Free(order);
    PyMem_Free(gut);
    return rc;
}

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

/* pdf._heading_kind: "size", "bold" or NULL (None) */
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
    if (a == b) return 0;
    if (s->nblocks == s->bcap) {
        Py_ssize_t cap = s->bcap ? s->bcap * 2 : 32;
        CBlock *arr = PyMem_Realloc(s->blocks, (size_t)cap * sizeof(CBlock));
        if (!arr) { PyErr_NoMemory(); return -1; }
        s->blocks = arr;
        s->bcap = cap;
    }
    PyObject *text = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, t + a, b - a);
    if (!text) return -1;
    CBlock *blk = &s->blocks[s->nblocks++];
    blk->text = text;
    blk->size = size;
    blk->top = top;
    blk->list_item = (char)list_item;
    blk->heading = (char)heading;
    return 0;
}

static void clear_blocks(LineSet *s) {
    for (Py_ssize_t i = 0; i < s->nblocks; i++) Py_CLEAR(s->blocks[i].text);
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
        int bullet = is_bullet(TXT(s, ln), ln->len);
        if (i > cur && (bullet || breaks(s, &s->lines[g->a[i - 1]], ln, left, right, usual_gap, body))) {
            if (store_block(s, g->a + cur, i - cur, list_item, buf, body) < 0) return -1;
            cur = i;
        }
        if (i == cur) list_item = bullet;
    }
    return store_block(s, g->a + cur, n - cur, list_item, buf, body);
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

/* pdf._classify for this page: Elements of the stored blocks */
static PyObject *ls_elements(LineSet *s, PyObject *args) {
    PyObject *cls, *kinds, *page, *levels;
    Py_ssize_t title;
    int deepest;
    if (!PyArg_ParseTuple(args, "OO!OnO!i", &cls, &PyTuple_Type, &kinds, &page, &title, &PyDict_Type, &levels,
                          &deepest))
        return NULL;
    if (!PyType_Check(cls) || PyTuple_GET_SIZE(kinds) != 4) {
        PyErr_SetString(PyExc_TypeError, "elements(Element, (TITLE, HEADING, PARAGRAPH, LIST_ITEM), page, ...)");
        return NULL;
    }
    PyObject *k_title = PyTuple_GET_ITEM(kinds, 0), *k_heading = PyTuple_GET_ITEM(kinds, 1);
    PyObject *k_paragraph = PyTuple_GET_ITEM(kinds, 2), *k_list = PyTuple_GET_ITEM(kinds, 3);
    PyObject *out = PyList_New(s->nblocks);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < s->nblocks; i++) {
        CBlock *b = &s->blocks[i];
        PyObject *e, *level = NULL;
        if (i == title) {
            e = new_element((PyTypeObject *)cls, k_title, b->text, Py_None, page);
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
        if (!e) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, i, e);
    }
    return out;
}

/* ---------------------------------------------------------------- LineSet: the Python side */

static PyObject *make_line(LineSet *s, CLine *ln, PyObject *cls) {
    PyObject *text = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, TXT(s, ln), ln->len);
    if (!text) return NULL;
    PyObject *obj = PyObject_CallFunction(cls, "NdddddiiO", text, ln->x0, ln->y0, ln->x1, ln->y1, ln->size, ln->start,
                                          ln->end, ln->hyphen ? Py_True : Py_False);
    if (obj && (PyObject_SetAttrString(obj, "bold", ln->bold ? Py_True : Py_False) < 0 ||
                PyObject_SetAttrString(obj, "vertical", ln->vertical ? Py_True : Py_False) < 0))
        Py_CLEAR(obj);
    return obj;
}

static PyObject *ls_lines(LineSet *s, PyObject *cls) {
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < s->page_lines; i++) {
        if (s->lines[i].dropped) continue;
        PyObject *ln = make_line(s, &s->lines[i], cls);
        if (!ln || PyList_Append(out, ln) < 0) { Py_XDECREF(ln); Py_DECREF(out); return NULL; }
        Py_DECREF(ln);
    }
    return out;
}

/* pdf_order._running_key: lowercase, digit runs -> "#", whitespace runs -> one space, stripped */
static PyObject *running_key_of(PyObject *text, UBuf *buf) {
    PyObject *low = PyObject_CallMethod(text, "lower", NULL);
    if (!low) return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(low);
    int kind = PyUnicode_KIND(low);
    const void *data = PyUnicode_DATA(low);
    buf->n = 0;
    int pending = 0, digits = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (is_space(c)) {
            pending = buf->n > 0;
            digits = 0;
            continue;
        }
        if (Py_UNICODE_ISDECIMAL(c)) {
            if (digits) continue;
            c = '#';
            digits = 1;
        } else {
            digits = 0;
        }
        if (pending && ubuf_putc(buf, ' ') < 0) { Py_DECREF(low); return NULL; }
        pending = 0;
        if (ubuf_putc(buf, c) < 0) { Py_DECREF(low); return NULL; }
    }
    Py_DECREF(low);
    return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, buf->a, buf->n);
}

static PyObject *running_key(LineSet *s, CLine *ln, UBuf *buf) {
    PyObject *text = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, TXT(s, ln), ln->len);
    if (!text) return NULL;
    PyObject *key = running_key_of(text, buf);
    Py_DECREF(text);
    return key;
}

/* pdf_order.running_lines' candidates of this page: [(zone, y, key, index)] */
static PyObject *ls_candidates(LineSet *s, PyObject *args) {
    double height;
    if (!PyArg_ParseTuple(args, "d", &height)) return NULL;
    Py_ssize_t total = s->page_lines, n = 0;
    PyObject *out = PyList_New(0);
    if (!out || !total) return out;
    int *order = PyMem_Malloc((size_t)total * sizeof(int));
    UBuf buf = {NULL, 0, 0};
    if (!order) { Py_DECREF(out); return PyErr_NoMemory(); }
    for (Py_ssize_t i = 0; i < total; i++)
        if (!s->lines[i].vertical) order[n++] = (int)i;
    if (merge_sort(order, n, less_neg_y1, s->lines) < 0) goto fail;
    for (int zone = 0; zone < 2; zone++) {
        for (Py_ssize_t k = 0; k < 3 && k < n; k++) {
            int i = zone ? order[n - 1 - k] : order[k];
            CLine *ln = &s->lines[i];
            double y = zone ? ln->y0 : ln->y1;
            if ((!zone && y < 0.8 * height) || (zone && y > 0.2 * height)) break;
            PyObject *key = running_key(s, ln, &buf);
            PyObject *t = key ? Py_BuildValue("(sdNi)", zone ? "bottom" : "top", y, key, i) : NULL;
            if (!t || PyList_Append(out, t) < 0) { Py_XDECREF(t); goto fail; }
            Py_DECREF(t);
        }
    }
    PyMem_Free(order);
    PyMem_Free(buf.a);
    return out;
fail:
    PyMem_Free(order);
    PyMem_Free(buf.a);
    Py_DECREF(out);
    return NULL;
}

static PyObject *ls_drop(LineSet *s, PyObject *indices) {
    PyObject *it = PyObject_GetIter(indices);
    if (!it) return NULL;
    PyObject *item;
    while ((item = PyIter_Next(it))) {
        Py_ssize_t i = PyNumber_AsSsize_t(item, PyExc_IndexError);
        Py_DECREF(item);
        if (i == -1 && PyErr_Occurred()) { Py_DECREF(it); return NULL; }
        if (i < 0 || i >= s->page_lines) {
            Py_DECREF(it);
            PyErr_SetString(PyExc_IndexError, "line index out of range");
            return NULL;
        }
        s->lines[i].dropped = 1;
    }
    Py_DECREF(it);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

/* [(round(size * 2) / 2, characters)] in order of first occurrence, kept lines only */
static PyObject *ls_weights(LineSet *s, PyObject *unused) {
    Py_ssize_t n = s->page_lines, nk = 0;
    double *keys = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(double));
    Py_ssize_t *counts = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(Py_ssize_t));
    if (!keys || !counts) { PyMem_Free(keys); PyMem_Free(counts); return PyErr_NoMemory(); }
    for (Py_ssize_t i = 0; i < n; i++) {
        CLine *ln = &s->lines[i];
        if (ln->dropped) continue;
        double key = nearbyint(ln->size * 2) / 2;
        Py_ssize_t k = 0;
        while (k < nk && keys[k] != key) k++;
        if (k == nk) { keys[nk] = key; counts[nk] = 0; nk++; }
        counts[k] += ln->len;
    }
    PyObject *out = PyList_New(nk);
    for (Py_ssize_t k = 0; out && k < nk; k++) {
        PyObject *pair = Py_BuildValue("(dn)", keys[k], counts[k]);
        if (!pair) { Py_CLEAR(out); break; }
        PyList_SET_ITEM(out, k, pair);
    }
    PyMem_Free(keys);
    PyMem_Free(counts);
    return out;
}

/* pdf_layout.char_words: words of the characters start..end with their boxes (word, x0, x1, y0, y1) */
static PyObject *ls_words(LineSet *s, PyObject *args) {
    unsigned long long addr;
    int start, end;
    double size;
    if (!PyArg_ParseTuple(args, "Kiid", &addr, &start, &end, &size)) return NULL;
    if (start < 0 || end >= s->nchars) {
        PyErr_SetString(PyExc_IndexError, "character index out of range");
        return NULL;
    }
    void *tp = (void *)(uintptr_t)addr;
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    RectF rect = {0, 0, 0, 0};
    UBuf chars = {NULL, 0, 0};
    double wx0 = 0, wx1 = 0, wy0 = 0, wy1 = 0, gap_limit = 0.25 * size;
#define FLUSH()                                                                                            \
    do {                                                                                                   \
        PyObject *w_ = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, chars.a, chars.n);                  \
        PyObject *t_ = w_ ? Py_BuildValue("(Ndddd)", w_, wx0, wx1, wy0, wy1) : NULL;                       \
        if (!t_ || PyList_Append(out, t_) < 0) { Py_XDECREF(t_); PyMem_Free(chars.a); Py_DECREF(out); return NULL; } \
        Py_DECREF(t_);                                                                                     \
        chars.n = 0;                                                                                       \
    } while (0)
    for (int i = start; i <= end; i++) {
        Py_UCS4 ch = s->text[i];
        if (is_space(ch)) {
            if (chars.n) FLUSH();
            continue;
        }
        double l, b, r, t;
        loose_box(tp, i, &rect, &l, &b, &r, &t);
        if (chars.n && l - wx1 > gap_limit) FLUSH();
        if (!chars.n) { wx0 = l; wx1 = r; wy0 = b; wy1 = t; }
        if (ubuf_putc(&chars, ch == 0xfffe ? '-' : ch) < 0) { PyMem_Free(chars.a); Py_DECREF(out); return NULL; }
        wx1 = wx1 > r ? wx1 : r;
    }
    if (chars.n) FLUSH();
#undef FLUSH
    PyMem_Free(chars.a);
    return out;
}

/* how many kept lines lie inside a table region (x0, y0, x1, y1), as pdf_tables._read_region counts them */
static PyObject *ls_inside(LineSet *s, PyObject *args) {
    double rx0, ry0, rx1, ry1;
    if (!PyArg_ParseTuple(args, "(dddd)", &rx0, &ry0, &rx1, &ry1)) return NULL;
    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0; i < s->page_lines; i++) {
        CLine *ln = &s->lines[i];
        if (ln->dropped || ln->vertical || ln->start < 0) continue;
        double mid = (ln->y0 + ln->y1) / 2;
        if (ry0 - 1 <= mid && mid <= ry1 + 1 && ln->x0 >= rx0 - 2 * ln->size && ln->x1 <= rx1 + 2 * ln->size) count++;
    }
    return PyLong_FromSsize_t(count);
}

static PyObject *ls_text(LineSet *s, PyObject *unused) {
    static const Py_UCS4 empty[1] = {0};
    return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, s->text ? s->text : empty, s->nchars);
}

static PyObject *ls_get_letters(LineSet *s, void *closure) {
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < s->page_lines; i++)
        if (!s->lines[i].dropped) total += s->lines[i].len;
    return PyLong_FromSsize_t(total);
}

static PyObject *ls_get_nchars(LineSet *s, void *closure) { return PyLong_FromSsize_t(s->nchars); }

static PyObject *ls_get_count(LineSet *s, void *closure) {
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < s->page_lines; i++) total += !s->lines[i].dropped;
    return PyLong_FromSsize_t(total);
}

static void ls_dealloc(LineSet *s) {
    clear_blocks(s);
    PyMem_Free(s->blocks);
    PyMem_Free(s->text);
    PyMem_Free(s->lines);
    PyMem_Free(s->arena.a);
    PyObject_Free(s);
}

static PyMethodDef ls_methods[] = {
    {"lines", (PyCFunction)ls_lines, METH_O, "The kept lines as Line objects (Line class as argument)."},
    {"candidates", (PyCFunction)ls_candidates, METH_VARARGS, "Running-line candidates [(zone, y, key, index)]."},
    {"drop", (PyCFunction)ls_drop, METH_O, "Drop the lines with these indices (running headers/footers)."},
    {"weights", (PyCFunction)ls_weights, METH_NOARGS, "[(rounded size, characters)] of the kept lines."},
    {"blocks", (PyCFunction)ls_blocks, METH_VARARGS, "Build the blocks (body size); [(index, size, top)] of size headings."},
    {"elements", (PyCFunction)ls_elements, METH_VARARGS, "Elements of the blocks (Element, kinds, page, title, levels, deepest)."},
    {"text", (PyCFunction)ls_text, METH_NOARGS, "The page text."},
    {"inside", (PyCFunction)ls_inside, METH_VARARGS, "Kept lines inside a region (x0, y0, x1, y1)."},
    {"words", (PyCFunction)ls_words, METH_VARARGS, "Words with boxes of chars start..end: (text page, start, end, size)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef ls_getset[] = {
    {"letters", (getter)ls_get_letters, NULL, "characters in the kept lines", NULL},
    {"nchars", (getter)ls_get_nchars, NULL, "characters on the text page", NULL},
    {"count", (getter)ls_get_count, NULL, "kept lines", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject LineSetType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ragwright.parse._pdfcore.LineSet",
    .tp_basicsize = sizeof(LineSet),
    .tp_dealloc = (destructor)ls_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The lines of one PDF page, held in C.",
    .tp_methods = ls_methods,
    .tp_getset = ls_getset,
};

/* ---------------------------------------------------------------- graphics (scan_graphics) */

/* pdf_tables._regions: clusters of horizontal rules of about the same extent lying close together */
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

/* ---------------------------------------------------------------- module */

static int bind_one(PyObject *table, const char *name, void **slot) {
    PyObject *v = PyDict_GetItemString(table, name);
    if (!v) {
        PyErr_Format(PyExc_KeyError, "bind(): the address of %s is missing", name);
        return -1;
    }
    unsigned long long addr = PyLong_AsUnsignedLongLong(v);
    if (PyErr_Occurred()) return -1;
    if (!addr) {
        PyErr_Format(PyExc_ValueError, "bind(): the address of %s is NULL", name);
        return -1;
    }
    *slot = (void *)(uintptr_t)addr;
    return 0;
}

static PyObject *core_bind(PyObject *self, PyObject *table) {
    if (!PyDict_Check(table)) {
        PyErr_SetString(PyExc_TypeError, "bind() takes a dict of pdfium function addresses");
        return NULL;
    }
    if (bind_one(table, "FPDFText_CountChars", (void **)&F.CountChars) < 0 ||
        bind_one(table, "FPDFText_GetText", (void **)&F.GetText) < 0 ||
        bind_one(table, "FPDFText_GetLooseCharBox", (void **)&F.GetLooseCharBox) < 0 ||
        bind_one(table, "FPDFText_GetFontWeight", (void **)&F.GetFontWeight) < 0 ||
        bind_one(table, "FPDFText_GetCharAngle", (void **)&F.GetCharAngle) < 0 ||
        bind_one(table, "FPDFText_GetUnicode", (void **)&F.GetUnicode) < 0 ||
        bind_one(table, "FPDFText_GetFontInfo", (void **)&F.GetFontInfo) < 0 ||
        bind_one(table, "FPDFPage_CountObjects", (void **)&F.CountObjects) < 0 ||
        bind_one(table, "FPDFPage_GetObject", (void **)&F.GetObject) < 0 ||
        bind_one(table, "FPDFPageObj_GetType", (void **)&F.GetType) < 0 ||
        bind_one(table, "FPDFPageObj_GetBounds", (void **)&F.GetBounds) < 0 ||
        bind_one(table, "FPDFPath_CountSegments", (void **)&F.CountSegments) < 0 ||
        bind_one(table, "FPDFImageObj_GetImagePixelSize", (void **)&F.ImagePixelSize) < 0) {
        F.bound = 0;
        return NULL;
    }
    F.bound = 1;
    Py_RETURN_NONE;
}

/* ---------------------------------------------------------------- test hooks: the ported regexes */

static Py_UCS4 *ucs4_of(PyObject *text, Py_ssize_t *n) {
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "a str is required");
        return NULL;
    }
    *n = PyUnicode_GET_LENGTH(text);
    return PyUnicode_AsUCS4Copy(text);
}

static PyObject *t_is_bullet(PyObject *self, PyObject *text) {
    Py_ssize_t n;
    Py_UCS4 *t = ucs4_of(text, &n);
    if (!t) return NULL;
    int r = is_bullet(t, n);
    PyMem_Free(t);
    return PyBool_FromLong(r);
}

static PyObject *t_has_leader(PyObject *self, PyObject *text) {
    Py_ssize_t n;
    Py_UCS4 *t = ucs4_of(text, &n);
    if (!t) return NULL;
    int r = has_leader(t, n);
    PyMem_Free(t);
    return PyBool_FromLong(r);
}

static PyObject *t_bold_name(PyObject *self, PyObject *name) {
    char *data;
    Py_ssize_t n;
    if (PyBytes_AsStringAndSize(name, &data, &n) < 0) return NULL;
    unsigned char buf[130];
    memset(buf, 0, sizeof(buf));
    memcpy(buf, data, (size_t)(n < 128 ? n : 128));
    return PyBool_FromLong(bold_name(buf));
}

static PyObject *t_numbered_dots(PyObject *self, PyObject *text) {
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "a str is required");
        return NULL;
    }
    return PyLong_FromLong(numbered_dots(text));
}

static PyObject *t_running_key(PyObject *self, PyObject *text) {
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "a str is required");
        return NULL;
    }
    UBuf buf = {NULL, 0, 0};
    PyObject *key = running_key_of(text, &buf);
    PyMem_Free(buf.a);
    return key;
}

static PyMethodDef core_methods[] = {
    {"_is_bullet", t_is_bullet, METH_O, "Test hook: pdf_order._BULLET.match."},
    {"_has_leader", t_has_leader, METH_O, "Test hook: pdf_order._LEADER.search."},
    {"_bold_name", t_bold_name, METH_O, "Test hook: pdf_layout._BOLD_NAME.search on a font name (bytes)."},
    {"_numbered_dots", t_numbered_dots, METH_O, "Test hook: dots of pdf._NUMBERED's number, -1 without a match."},
    {"_running_key", t_running_key, METH_O, "Test hook: pdf_order._running_key."},
    {"bind", core_bind, METH_O, "Bind the pdfium functions: {name: address}."},
    {"extract", core_extract, METH_VARARGS, "Lines of a text page (address): a LineSet, or None for the Python path."},
    {"graphics", core_graphics, METH_VARARGS, "(hrules, vrules, image_cover, image_px) of a page (address, w, h)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "_pdfcore", "The per-line hot path of PDF parsing in C (see pdf_layout.py).", -1,
    core_methods,
};

PyMODINIT_FUNC PyInit__pdfcore(void) {
    if (PyType_Ready(&LineSetType) < 0) return NULL;
    S_kind = PyUnicode_InternFromString("kind");
    S_text = PyUnicode_InternFromString("text");
    S_level = PyUnicode_InternFromString("level");
    S_page = PyUnicode_InternFromString("page");
    S_attributes = PyUnicode_InternFromString("attributes");
    if (!S_kind || !S_text || !S_level || !S_page || !S_attributes) return NULL;
    PyObject *m = PyModule_Create(&core_module);
    if (!m) return NULL;
#ifndef RW_SOURCE_HASH
#define RW_SOURCE_HASH ""
#endif
    if (PyModule_AddStringConstant(m, "SOURCE_HASH", RW_SOURCE_HASH) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&LineSetType);
    if (PyModule_AddObject(m, "LineSet", (PyObject *)&LineSetType) < 0) {
        Py_DECREF(&LineSetType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

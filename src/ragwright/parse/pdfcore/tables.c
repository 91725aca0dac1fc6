/* Rules, images and table regions of a page (pdf_tables.scan_graphics, _regions) and the table
 * pre-check (the first tests of pdf_tables._read_region). Part of _pdfcore.c. */
/* ---------------------------------------------------------------- table pre-check (pdf_tables._read_region) */

typedef struct { double x0, x1, y0, y1; } WBox;
typedef struct { WBox *a; Py_ssize_t n, cap; } WVec;

static int wvec_push(WVec *v, WBox w) {
    if (v->n == v->cap) {
        Py_ssize_t cap = v->cap ? v->cap * 2 : 32;
        WBox *a = PyMem_Realloc(v->a, (size_t)cap * sizeof(WBox));
        if (!a) { PyErr_NoMemory(); return -1; }
        v->a = a;
        v->cap = cap;
    }
    v->a[v->n++] = w;
    return 0;
}

/* char_words' boxes (x0, x1, y0, y1) of the characters of one line, appended to out */
static int word_boxes(LineSet *s, void *tp, CLine *ln, WVec *out) {
    RectF rect = {0, 0, 0, 0};
    int open = 0;
    WBox w = {0, 0, 0, 0};
    double gap_limit = 0.25 * ln->size;
    for (int i = ln->start; i <= ln->end; i++) {
        if (is_space(s->text[i])) {
            if (open && wvec_push(out, w) < 0) return -1;
            open = 0;
            continue;
        }
        double l, b, r, t;
        loose_box(tp, i, &rect, &l, &b, &r, &t);
        if (open && l - w.x1 > gap_limit) {
            if (wvec_push(out, w) < 0) return -1;
            open = 0;
        }
        if (!open) { w.x0 = l; w.x1 = r; w.y0 = b; w.y1 = t; open = 1; }
        w.x1 = w.x1 > r ? w.x1 : r;
    }
    if (open && wvec_push(out, w) < 0) return -1;
    return 0;
}

static int less_neg_top(const void *ctx, int a, int b) {
    const WBox *W = ctx;
    return -W[a].y1 < -W[b].y1;
}

static int less_wx0(const void *ctx, int a, int b) {
    const WBox *W = ctx;
    return W[a].x0 < W[b].x0;
}

/* _split_by_height + the prose test of one pdfium row's words: how many of its rows are not prose */
static int body_rows(const WBox *W, Py_ssize_t n, Py_ssize_t *count) {
    if (!n) return 0;
    int *order = PyMem_Malloc((size_t)n * sizeof(int));
    int *row_of = PyMem_Malloc((size_t)n * sizeof(int));
    int *firsts = PyMem_Malloc((size_t)n * sizeof(int)); /* the first word of each row */
    int *members = PyMem_Malloc((size_t)n * sizeof(int));
    int rc = -1;
    if (!order || !row_of || !firsts || !members) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t i = 0; i < n; i++) order[i] = (int)i;
    if (merge_sort(order, n, less_neg_top, W) < 0) goto done;
    Py_ssize_t nrows = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        const WBox *w = &W[order[k]];
        Py_ssize_t r = 0;
        for (; r < nrows; r++) {
            const WBox *f = &W[firsts[r]];
            double top = f->y1, bottom = f->y0;
            double overlap = (top < w->y1 ? top : w->y1) - (bottom > w->y0 ? bottom : w->y0);
            double ha = top - bottom, hb = w->y1 - w->y0;
            if (overlap >= 0.4 * (hb < ha ? hb : ha)) break;
        }
        if (r == nrows) firsts[nrows++] = order[k];
        row_of[order[k]] = (int)r;
    }
    for (Py_ssize_t r = 0; r < nrows; r++) {
        Py_ssize_t m = 0; /* the row's words in the order they joined it, then by x0 (stable) */
        for (Py_ssize_t k = 0; k < n; k++)
            if (row_of[order[k]] == r) members[m++] = order[k];
        if (merge_sort(members, m, less_wx0, W) < 0) goto done;
        int has_gap = 0;
        double gap = 0.0, height = 0.0;
        for (Py_ssize_t k = 0; k < m; k++) {
            const WBox *w = &W[members[k]];
            if (k) {
                double g = w->x0 - W[members[k - 1]].x1;
                if (!has_gap || g > gap) gap = g;
                has_gap = 1;
            }
            double h = w->y1 - w->y0;
            if (!k || h > height) height = h;
        }
        if (!has_gap) gap = 0.0;
        if (!(gap < 0.55 * height)) (*count)++;
    }
    rc = 0;
done:
    PyMem_Free(order);
    PyMem_Free(row_of);
    PyMem_Free(firsts);
    PyMem_Free(members);
    return rc;
}

/* Whether pdf_tables._read_region could find a table in the region (x0, y0, x1, y1): at least two
 * lines inside and at least two rows of aligned (not prose) words. False means it returns None. */
static PyObject *ls_table_candidate(LineSet *s, PyObject *args) {
    unsigned long long addr;
    double rx0, ry0, rx1, ry1;
    if (!PyArg_ParseTuple(args, "K(dddd)", &addr, &rx0, &ry0, &rx1, &ry1)) return NULL;
    void *tp = (void *)(uintptr_t)addr;
    IVec inside = {NULL, 0, 0};
    WVec words = {NULL, 0, 0};
    int *order = NULL;
    PyObject *result = NULL;
    for (Py_ssize_t i = 0; i < s->page_lines; i++) {
        CLine *ln = &s->lines[i];
        if (ln->dropped || ln->vertical || ln->start < 0) continue;
        double mid = (ln->y0 + ln->y1) / 2;
        if (ry0 - 1 <= mid && mid <= ry1 + 1 && ln->x0 >= rx0 - 2 * ln->size && ln->x1 <= rx1 + 2 * ln->size &&
            ivec_push(&inside, (int)i) < 0)
            goto done;
    }
    if (inside.n < 2) {
        result = Py_False;
        Py_INCREF(result);
        goto done;
    }
    Py_ssize_t n = inside.n, body = 0;
    order = PyMem_Malloc((size_t)n * sizeof(int));
    if (!order) { PyErr_NoMemory(); goto done; }
    memcpy(order, inside.a, (size_t)n * sizeof(int));
    if (merge_sort(order, n, less_neg_y1, s->lines) < 0) goto done;
    Py_ssize_t r0 = 0; /* group_rows(inside, max_size_ratio=1.25) */
    while (r0 < n && body < 2) {
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
        words.n = 0;
        for (Py_ssize_t k = r0; k < r1; k++)
            if (word_boxes(s, tp, &s->lines[order[k]], &words) < 0) goto done;
        if (body_rows(words.a, words.n, &body) < 0) goto done;
        r0 = r1;
    }
    result = body >= 2 ? Py_True : Py_False;
    Py_INCREF(result);
done:
    ivec_free(&inside);
    PyMem_Free(words.a);
    PyMem_Free(order);
    return result;
}


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

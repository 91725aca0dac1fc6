/* The LineSet object: what Python sees of a page held by the engine (lines, running-line
 * candidates, weights, words, text). Part of _pdfcore.c. */
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
        if (s->lines[i].dropped || s->lines[i].table >= 0) continue;
        PyObject *ln = make_line(s, &s->lines[i], cls);
        if (!ln || PyList_Append(out, ln) < 0) { Py_XDECREF(ln); Py_DECREF(out); return NULL; }
        Py_DECREF(ln);
    }
    return out;
}

/* pdf.order._running_key: lowercase, digit runs -> "#", whitespace runs -> one space, stripped */
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

/* pdf.order.running_lines' candidates of this page: [(zone, y, key, index)] */
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
        if (!s->lines[i].vertical && !s->lines[i].dropped && s->lines[i].table < 0) order[n++] = (int)i;
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
        if (ln->dropped || ln->table >= 0) continue;
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



/* the page's tables as stand-in lines, after its lines (as pdf.elements.page_elements adds them): [(x0, y0, x1, y1, md)] */
static PyObject *ls_add_tables(LineSet *s, PyObject *tables) {
    if (!PyList_Check(tables)) {
        PyErr_SetString(PyExc_TypeError, "add_tables() takes a list of (x0, y0, x1, y1, markdown)");
        return NULL;
    }
    if (s->nlines != s->page_lines) {
        PyErr_SetString(PyExc_RuntimeError, "add_tables() must come before blocks()");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(tables); k++) {
        CLine ln = new_line();
        PyObject *md;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(tables, k), "ddddU", &ln.x0, &ln.y0, &ln.x1, &ln.y1, &md)) return NULL;
        Py_ssize_t n = PyUnicode_GET_LENGTH(md);
        if (ubuf_reserve(&s->arena, n) < 0) return NULL;
        if (!PyUnicode_AsUCS4(md, s->arena.a + s->arena.n, n, 0)) return NULL;
        ln.off = s->arena.n;
        ln.len = n;
        s->arena.n += n;
        ln.size = 10.0;
        ln.start = ln.end = -1;
        ln.table = (int)k;
        if (add_line(s, &ln) < 0) return NULL;
        s->page_lines = s->nlines;
    }
    Py_RETURN_NONE;
}

static PyObject *ls_text(LineSet *s, PyObject *unused) {
    static const Py_UCS4 empty[1] = {0};
    return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, s->text ? s->text : empty, s->nchars);
}

static PyObject *ls_get_letters(LineSet *s, void *closure) {
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < s->page_lines; i++)
        if (!s->lines[i].dropped && s->lines[i].table < 0) total += s->lines[i].len;
    return PyLong_FromSsize_t(total);
}


static PyObject *ls_get_count(LineSet *s, void *closure) {
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < s->page_lines; i++) total += !s->lines[i].dropped && s->lines[i].table < 0;
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
    {"add_tables", (PyCFunction)ls_add_tables, METH_O, "Add the page's tables as stand-ins: [(x0, y0, x1, y1, md)]."},
    {"region_rows", (PyCFunction)ls_region_rows, METH_VARARGS,
     "pdf.tables.region_rows of a region: (text page, (x0, y0, x1, y1), vrules) -> rows or None."},
    {"drop_inside", (PyCFunction)ls_drop_inside, METH_VARARGS, "Drop the lines a table box covers."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef ls_getset[] = {
    {"letters", (getter)ls_get_letters, NULL, "characters in the kept lines", NULL},
    {"count", (getter)ls_get_count, NULL, "kept lines", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject LineSetType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ragwright.parse.pdf._pdfcore.LineSet",
    .tp_basicsize = sizeof(LineSet),
    .tp_dealloc = (destructor)ls_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The lines of one PDF page, held in C.",
    .tp_methods = ls_methods,
    .tp_getset = ls_getset,
};

/*
 * ragwright.parse.pdf._pdfcore: the per-line hot path of PDF parsing in C.
 *
 * The pure-Python modules layout.py (lines with geometry, bold), order.py (reading order,
 * paragraphs, de-hyphenation, running lines), tables.py (rules, image coverage, a table region's
 * rows of words) and elements.py (headings, elements) are the reference; this engine computes
 * the same results with the same double-precision arithmetic and the same stable orderings, calling
 * pdfium through the function pointers pypdfium2 already loaded (bind()). A page with right-to-left
 * text makes extract() return None and takes the Python path, as does a page bound for OCR;
 * tests/parse/test_pdfcore.py proves both paths give identical documents.
 *
 * One translation unit: this file includes the parts in pdfcore/ (common.h, lines.c, order.c,
 * blocks.c, tables.c, lineset.c, hidden.c) and holds the module. Compiled at install time when a C compiler is
 * present (hatch_build.py); without it ragwright uses the Python modules, about half as fast on
 * text-heavy PDFs.
 */
#include "pdfcore/common.h"
#include "pdfcore/lines.c"
#include "pdfcore/order.c"
#include "pdfcore/blocks.c"
#include "pdfcore/tables.c"
#include "pdfcore/lineset.c"
#include "pdfcore/hidden.c"

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
        bind_one(table, "FPDFImageObj_GetImagePixelSize", (void **)&F.ImagePixelSize) < 0 ||
        bind_one(table, "FPDFPage_GetCropBox", (void **)&F.GetCropBox) < 0 ||
        bind_one(table, "FPDFPage_GetMediaBox", (void **)&F.GetMediaBox) < 0 ||
        bind_one(table, "FPDFPageObj_GetFillColor", (void **)&F.GetFillColor) < 0 ||
        bind_one(table, "FPDFPageObj_GetStrokeColor", (void **)&F.GetStrokeColor) < 0 ||
        bind_one(table, "FPDFPageObj_HasTransparency", (void **)&F.HasTransparency) < 0 ||
        bind_one(table, "FPDFPath_GetDrawMode", (void **)&F.GetDrawMode) < 0 ||
        bind_one(table, "FPDFPath_GetPathSegment", (void **)&F.GetPathSegment) < 0 ||
        bind_one(table, "FPDFPathSegment_GetPoint", (void **)&F.SegmentPoint) < 0 ||
        bind_one(table, "FPDFPathSegment_GetType", (void **)&F.SegmentType) < 0 ||
        bind_one(table, "FPDFPageObj_GetMatrix", (void **)&F.GetMatrix) < 0 ||
        bind_one(table, "FPDFTextObj_GetTextRenderMode", (void **)&F.GetRenderMode) < 0 ||
        bind_one(table, "FPDFTextObj_GetFontSize", (void **)&F.GetFontSize) < 0) {
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
    {"_is_bullet", t_is_bullet, METH_O, "Test hook: pdf.order._BULLET.match."},
    {"_has_leader", t_has_leader, METH_O, "Test hook: pdf.order._LEADER.search."},
    {"_bold_name", t_bold_name, METH_O, "Test hook: pdf.layout._BOLD_NAME.search on a font name (bytes)."},
    {"_numbered_dots", t_numbered_dots, METH_O, "Test hook: dots of pdf.elements._NUMBERED's number, -1 without a match."},
    {"_running_key", t_running_key, METH_O, "Test hook: pdf.order._running_key."},
    {"bind", core_bind, METH_O, "Bind the pdfium functions: {name: address}."},
    {"extract", core_extract, METH_VARARGS, "Lines of a text page (address): a LineSet, or None for the Python path."},
    {"graphics", core_graphics, METH_VARARGS, "(hrules, vrules, image_cover, image_px) of a page (address, w, h)."},
    {"hidden", core_hidden, METH_VARARGS, "Indexes of a page's hidden text objects (address, w, h): pdf.hidden."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "_pdfcore", "The per-line hot path of PDF parsing in C (see layout.py).", -1,
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

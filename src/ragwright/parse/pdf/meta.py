"""PDF document metadata: the info dictionary (robust to garbage), attachments and AcroForm fields."""

from __future__ import annotations

import contextlib
import ctypes
import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

__all__ = ["MAX_FORM_PAGES", "document_metadata", "form_fields", "has_widgets", "pdf_date"]

_DATE = re.compile(
    r"^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?\s*(?:([Zz])|([+-])(\d{2})'?(?:(\d{2})'?)?)?"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ufffd\ufeff]")
_FIELD_TYPES = {1: "button", 2: "checkbox", 3: "radio", 4: "combobox", 5: "listbox", 6: "text", 7: "signature"}
_TEXT_KEYS = {"Title": "title", "Author": "author", "Subject": "subject", "Keywords": "keywords"}
_TOOL_KEYS = {"Creator": "creator", "Producer": "producer"}
MAX_FORM_PAGES = 50


def pdf_date(value: str) -> str | None:
    """A PDF date (``D:YYYYMMDDHHmmSS+HH'mm'``, parts optional) as ISO-8601, or ``None`` if unreadable."""
    match = _DATE.match(value.strip())
    if not match:
        return None
    year, month, day, hour, minute, second, zulu, sign, tz_h, tz_m = match.groups()
    try:
        tz: timezone | None = None
        if zulu:
            tz = UTC
        elif sign:
            offset = timedelta(hours=int(tz_h), minutes=int(tz_m or 0))
            tz = timezone(-offset if sign == "-" else offset)
        moment = datetime(
            int(year), int(month or 1), int(day or 1), int(hour or 0), int(minute or 0), int(second or 0), tzinfo=tz
        )
    except (ValueError, OverflowError):
        return None
    if not 1900 <= moment.year <= 2200:
        return None
    return moment.isoformat()


def _clean(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = " ".join(_CONTROL.sub("", value).split())[:500]
    return text or None


def document_metadata(pdf: Any, raw: Any, page_count: int) -> dict[str, Any]:
    """Title, author, subject, keywords, creator, producer, dates, page count, attachments (see also
    :func:`form_fields`)."""
    meta: dict[str, Any] = {"page_count": page_count}
    try:
        info = pdf.get_metadata_dict(skip_empty=True)
    except Exception:  # a broken info dictionary must not fail the parse
        info = {}
    for key, name in {**_TEXT_KEYS, **_TOOL_KEYS}.items():
        value = _clean(info.get(key))
        if value and not (name == "title" and _junk_title(value)):
            meta[name] = value
    for key, name in (("CreationDate", "created_at"), ("ModDate", "updated_at")):
        raw_date = _clean(info.get(key))
        date = pdf_date(raw_date) if raw_date else None
        if date:
            meta[name] = date
    attachments = _attachments(pdf)
    if attachments:
        meta["attachments"] = attachments
    return meta


def _junk_title(title: str) -> bool:
    """Titles that are file names or tool placeholders, not the document's title."""
    low = title.lower()
    return (
        low.startswith(("microsoft word - ", "untitled", "document1"))
        or low.endswith((".doc", ".docx", ".pdf", ".tex", ".dvi", ".indd", ".rtf", ".odt"))
        or not any(c.isalpha() for c in title)
    )


def _attachments(pdf: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    try:
        for i in range(int(pdf.count_attachments())):
            item = pdf.get_attachment(i)
            entry: dict[str, Any] = {"name": _clean(item.get_name()) or f"attachment-{i + 1}"}
            with contextlib.suppress(Exception):  # the size is informational
                entry["size"] = len(item.get_data())
            out.append(entry)
    except Exception:  # attachments are informational
        return out
    return out


def has_widgets(raw: Any, page: Any) -> bool:
    """Whether a loaded page has a form widget annotation (only then are form fields worth reading)."""
    for a in range(int(raw.FPDFPage_GetAnnotCount(page))):
        annot = raw.FPDFPage_GetAnnot(page, a)
        try:
            if int(raw.FPDFAnnot_GetSubtype(annot)) == 20:  # FPDF_ANNOT_WIDGET
                return True
        finally:
            raw.FPDFPage_CloseAnnot(annot)
    return False


def form_fields(pdf: Any, raw: Any, page_count: int) -> list[dict[str, Any]]:
    """AcroForm fields (name, type, value) from the widget annotations of the first pages.

    Initialising pdfium's form environment and reloading pages costs several milliseconds, so
    :func:`~ragwright.parse.pdf.parse_pdf` calls this only when a page it read has a widget
    (:func:`has_widgets`).
    """
    try:
        if int(pdf.get_formtype()) == 0:
            return []
        pdf.init_forms()
        form = pdf.formenv.raw if pdf.formenv is not None else None
    except Exception:
        return []
    if form is None:
        return []
    fields: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index in range(min(page_count, MAX_FORM_PAGES)):
        page = raw.FPDF_LoadPage(pdf.raw, index)
        if not page:
            continue
        try:
            for a in range(int(raw.FPDFPage_GetAnnotCount(page))):
                annot = raw.FPDFPage_GetAnnot(page, a)
                try:
                    if int(raw.FPDFAnnot_GetSubtype(annot)) != 20:  # FPDF_ANNOT_WIDGET
                        continue
                    name = _annot_string(raw.FPDFAnnot_GetFormFieldName, form, annot)
                    if not name or name in seen:
                        continue
                    seen.add(name)
                    kind = _FIELD_TYPES.get(int(raw.FPDFAnnot_GetFormFieldType(form, annot)), "unknown")
                    value = _annot_string(raw.FPDFAnnot_GetFormFieldValue, form, annot)
                    fields.append({"name": name, "type": kind, "value": value, "page": index + 1})
                finally:
                    raw.FPDFPage_CloseAnnot(annot)
        finally:
            raw.FPDF_ClosePage(page)
    return fields


def _annot_string(getter: Any, form: Any, annot: Any) -> str:
    size = int(getter(form, annot, None, 0))
    if size <= 2:
        return ""
    buffer = ctypes.create_string_buffer(size)
    getter(form, annot, ctypes.cast(buffer, ctypes.POINTER(ctypes.c_ushort)), size)
    return _clean(buffer.raw[: size - 2].decode("utf-16-le", "replace")) or ""

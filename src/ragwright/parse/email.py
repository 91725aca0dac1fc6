"""Email: EML (MIME, parsed with the stdlib ``email`` package) and Outlook MSG (extract-msg), one shape.

The Document holds the subject as ``TITLE``, a paragraph of sender/recipients/date, then the body;
headers go to metadata (``from``, ``from_address``, ``to``, ``cc``, ``title``/``subject``,
``created_at``, ``message_id``, ``author``, ``attachments``, ``body_format``).

**Body choice.** ``text/plain`` is preferred — it is what the sender's client wrote for plain readers
and carries no markup. The ``text/html`` part is used instead when there is no plain part, or when the
plain part is a stub: empty or whitespace, a known "view this in an HTML viewer" notice, or under 200
characters while the HTML text is more than three times as long. HTML is converted by
:mod:`ragwright.parse.html` (whole body, no main-content extraction; hidden content stripped).

**Quoted replies and signatures are stripped**, line by line (HTML bodies element by element, with
``<blockquote>`` treated as quoted):

* lines starting with ``>`` are dropped wherever they are (interleaved answers keep their own lines);
* the body is cut at a reply header: ``On <date>, <who> wrote:`` (one or two lines, also the French,
  German, Spanish, Italian and Dutch forms), Outlook's ``-----Original Message-----``, or a
  ``From: …`` line followed within three lines by ``Sent:``/``Date:`` (Outlook's reply header);
* the body is cut at the standard signature delimiter ``-- `` (a line of two dashes);
* device lines such as ``Sent from my iPhone`` / ``Get Outlook for Android`` are dropped.

Sign-offs ("Best, Mallori") are *not* stripped: they are not reliably separable from content.

**Attachments** (parts with ``Content-Disposition: attachment``, or non-inline parts with a filename)
become child Documents parsed by :func:`ragwright.parse.registry.parse_bytes` with ids
``"<document_id>/<filename>"`` (in this process: the email parser is itself the isolated step); an
attachment that cannot be parsed is skipped with a warning ``"attachment x.pdf not indexed: <reason>"``.
Attached messages (``message/rfc822``, embedded MSG) are parsed as emails, three levels deep at most.
Encrypted messages (PGP/MIME, S/MIME enveloped data, inline PGP) raise ``ParseError("encrypted: …")``.
"""

from __future__ import annotations

import codecs
import dataclasses
import email
import io
import re
from collections.abc import Callable
from datetime import datetime
from email import policy
from email.headerregistry import Address
from email.message import EmailMessage, Message
from email.utils import getaddresses, parsedate_to_datetime
from typing import Any

from ragwright._deps import require
from ragwright.errors import LimitExceeded, MissingDependencyError, ParseError
from ragwright.model.document import Document, Element, ElementKind
from ragwright.parse.options import ParseOptions

# 3: image attachments read as a single glyph are not indexed (image/2); 4: blank margins not searched (image/3)
VERSION = "email/4"
MAX_ATTACHMENTS = 100
MAX_DEPTH = 3

_ATTRIBUTION = re.compile(
    r"^\s*(?:(On|Le|El|Il|Op)\s.{0,300}\s(wrote|a écrit|escribió|ha scritto|schreef)\s*:"
    r"|Am\s.{0,300}\sschrieb\s.{0,200}:)\s*$",
    re.I,
)
_ORIGINAL = re.compile(r"^\s*-{2,}\s*(Original Message|Ursprüngliche Nachricht|Message d'origine)\s*-{2,}\s*$", re.I)
_FROM = re.compile(r"^\s*\*?(From|Von|De)\s*:\*?\s*\S", re.I)
_SENT = re.compile(r"^\s*\*?(Sent|Date|Gesendet|Envoyé)\s*:\*?\s*\S", re.I)
_SIG = re.compile(r"^--\s*$")
_DEVICE = re.compile(
    r"^\s*(Sent from my \w[\w ]{0,30}|Sent from (Mail|Outlook|Yahoo Mail|Gmail)( for \w+)?\b.*|"
    r"Get Outlook for (iOS|Android)|Sent from my mobile( device)?)\s*\.?\s*$",
    re.I,
)
_STUB = re.compile(
    r"(html (compatible )?(e-?mail )?(viewer|reader|client)|view (this|it) (e-?mail |message )?in (your|a) "
    r"(web )?browser|does not support html|this is an html (message|e-?mail))",
    re.I,
)
_BULLET = re.compile(r"^\s*([-*•·]|\d{1,3}[.)])\s+")
_ENCRYPTED_TYPES = ("multipart/encrypted", "application/pkcs7-mime", "application/x-pkcs7-mime")
_SIGNATURE_TYPES = ("application/pgp-signature", "application/pkcs7-signature", "application/x-pkcs7-signature")


# ------------------------------------------------------------------------------------ body cleaning
def strip_reply(lines: list[str]) -> tuple[list[str], list[str]]:
    """Lines kept from a body after quote/reply/signature stripping, and what was stripped (labels)."""
    kept: list[str] = []
    stripped: list[str] = []
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.lstrip().startswith(">"):
            if "quoted lines" not in stripped:
                stripped.append("quoted lines")
            continue
        if (
            _ATTRIBUTION.match(line)
            or (line.lstrip()[:3] in ("On ", "Le ", "Am ", "El ") and _ATTRIBUTION.match(f"{line} {nxt}"))
            or _ORIGINAL.match(line)
            or (_FROM.match(line) and any(_SENT.match(n) for n in lines[i + 1 : i + 4]))
        ):
            stripped.append("quoted reply")
            break
        if _SIG.match(line):
            stripped.append("signature")
            break
        if _DEVICE.match(line):
            stripped.append("device signature")
            continue
        kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    return kept, stripped


def _text_elements(text: str) -> list[Element]:
    """Paragraphs (blank-line separated) of a plain-text body; blocks of bullet lines become list items."""
    out: list[Element] = []
    for block in re.split(r"\n\s*\n", text):
        lines = [ln for ln in block.split("\n") if ln.strip()]
        if lines and all(_BULLET.match(ln) for ln in lines):
            out += [Element(ElementKind.LIST_ITEM, _BULLET.sub("", ln).strip(), level=1) for ln in lines]
        elif lines:
            out.append(Element(ElementKind.PARAGRAPH, "\n".join(" ".join(ln.split()) for ln in lines)))
    return out


def _html_body(html: str) -> tuple[list[Element], list[str], int]:
    """Elements of an HTML body after stripping; also the strip labels and the hidden-element count."""
    from ragwright.parse.html import html_elements

    elements, _, hidden = html_elements(html, main_content=False)
    out: list[Element] = []
    stripped: list[str] = []
    for el in elements:
        if el.kind is ElementKind.QUOTE:
            stripped.append("quoted lines")
            continue
        kept, found = strip_reply(el.text.split("\n"))
        stripped += found
        if kept:
            out.append(dataclasses.replace(el, text="\n".join(kept)))
        if any(label in ("quoted reply", "signature") for label in found):
            break
    return out, sorted(set(stripped)), hidden


def _is_stub(plain: str, html_text: str) -> bool:
    body = plain.strip()
    if not body:
        return True
    if len(body) < 300 and _STUB.search(body):
        return True
    return len(body) < 200 and len(html_text.strip()) > 3 * len(body)


# --------------------------------------------------------------------------------------- assembling
@dataclasses.dataclass
class _Mail:
    """What both formats yield before assembly."""

    sender: str = ""
    to: list[str] = dataclasses.field(default_factory=list)
    cc: list[str] = dataclasses.field(default_factory=list)
    subject: str = ""
    date: datetime | None = None
    message_id: str = ""
    plain: list[str] = dataclasses.field(default_factory=list)
    html: list[str] = dataclasses.field(default_factory=list)
    # (filename, payload bytes or the parser of an attached message given its child id)
    attachments: list[tuple[str, bytes | Callable[[str], Document]]] = dataclasses.field(default_factory=list)
    warnings: list[str] = dataclasses.field(default_factory=list)


def _assemble(document_id: str, mail: _Mail, source: str | None, options: ParseOptions) -> Document:
    plain = "\n\n".join(p for p in mail.plain if p.strip())
    html = "\n".join(mail.html)
    if "-----BEGIN PGP MESSAGE-----" in (plain or html):
        raise ParseError("encrypted: the body is an inline PGP message; it cannot be read without the key")
    elements: list[Element] = []
    stripped: list[str] = []
    warnings_pre: list[str] = []
    hidden = 0
    body_format = "text/plain"
    if html.strip() and len(plain.strip()) < 300:  # the HTML part is read only when the plain one may be a stub
        try:
            html_els, html_stripped, html_hidden = _html_body(html)
        except MissingDependencyError:
            if not plain.strip():
                raise  # only HTML to read: the error names the extra (ragwright[html])
            html_els, html_stripped, html_hidden = [], [], 0
            warnings_pre = ["HTML body not read (lxml is not installed); used the text/plain part"]
        if html_els and _is_stub(plain, "\n".join(e.text for e in html_els)):
            elements, stripped, hidden, body_format = html_els, html_stripped, html_hidden, "text/html"
    if body_format == "text/plain":
        lines = plain.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        kept, stripped = strip_reply(lines)
        elements = _text_elements("\n".join(kept))
    warnings = list(mail.warnings) + warnings_pre
    if hidden:
        warnings.append(f"stripped {hidden} hidden element{'s' if hidden != 1 else ''} from the HTML body")
    head = [f"From: {mail.sender}" if mail.sender else "", "To: " + ", ".join(mail.to) if mail.to else ""]
    head += ["Cc: " + ", ".join(mail.cc) if mail.cc else "", f"Date: {mail.date.isoformat()}" if mail.date else ""]
    prefix = [Element(ElementKind.TITLE, mail.subject)] if mail.subject else []
    if any(head):
        attrs = {"role": "email_headers"}
        prefix.append(Element(ElementKind.PARAGRAPH, "\n".join(h for h in head if h), attributes=attrs))
    children = _children(document_id, mail, source, options, warnings)
    address = getaddresses([mail.sender])[0][1] if mail.sender else ""
    meta: dict[str, Any] = {
        "title": mail.subject or None,
        "subject": mail.subject or None,
        "from": mail.sender or None,
        "from_address": address or None,
        "author": mail.sender or None,
        "to": mail.to or None,
        "cc": mail.cc or None,
        "created_at": mail.date.isoformat() if mail.date else None,
        "message_id": mail.message_id or None,
        "attachments": [name for name, _ in mail.attachments] or None,
        "body_format": body_format,
        "stripped": stripped or None,
        "hidden_elements": hidden or None,
    }
    return Document(
        id=document_id,
        elements=tuple(prefix + elements),
        title=mail.subject or None,
        source=source,
        mime_type="message/rfc822",
        metadata={k: v for k, v in meta.items() if v is not None},
        children=children,
        warnings=tuple(warnings),
    )


def _children(
    document_id: str, mail: _Mail, source: str | None, options: ParseOptions, warnings: list[str]
) -> tuple[Document, ...]:
    from ragwright.parse.registry import parse_bytes

    children: list[Document] = []
    seen: set[str] = set()
    inner = dataclasses.replace(options, isolate=False)
    for n, (name, payload) in enumerate(mail.attachments):
        if n >= MAX_ATTACHMENTS:
            warnings.append(f"{len(mail.attachments) - n} attachments not indexed: over the limit of {MAX_ATTACHMENTS}")
            break
        base = name.replace("\\", "/").rsplit("/", 1)[-1].strip() or f"attachment-{n + 1}"
        unique, k = base, 1
        while unique in seen:
            k += 1
            unique = f"{k}-{base}"
        seen.add(unique)
        child_id = f"{document_id}/{unique}"
        try:
            if callable(payload):
                child = payload(child_id)
            else:
                child = parse_bytes(child_id, payload, name_hint=base, source=source, options=inner)
        except Exception as exc:  # one unreadable attachment must not lose the message (fault isolation)
            warnings.append(f"attachment {base} not indexed: {exc}")
            continue
        meta = {**child.metadata, "parent_id": document_id, "filename": base}
        children.append(dataclasses.replace(child, metadata=meta))
    return tuple(children)


# ---------------------------------------------------------------------------------------------- EML
def _decode(part: Message, what: str, warnings: list[str]) -> str:
    """A text part's content: declared charset, then UTF-8, then cp1252; replacements are reported."""
    raw = part.get_payload(decode=True)
    if not isinstance(raw, bytes):
        return ""
    charset = (part.get_content_charset() or "utf-8").strip().lower()
    try:
        codecs.lookup(charset)
    except LookupError:
        warnings.append(f"unknown charset {charset!r} in the {what}; decoded as UTF-8")
        charset = "utf-8"
    for candidate in dict.fromkeys((charset, "utf-8", "cp1252")):
        try:
            return raw.decode(candidate)
        except UnicodeDecodeError:
            continue
    text = raw.decode(charset, errors="replace")
    warnings.append(f"undecodable bytes in the {what} replaced (charset {charset})")
    return text


def _header(msg: Message, name: str) -> str:
    try:
        value = msg.get(name)
    except Exception:  # a malformed header the policy cannot parse: fall back to the raw value
        value = next((v for k, v in msg.raw_items() if k.lower() == name.lower()), None)
    return " ".join(str(value).split()) if value is not None else ""


def _addresses(value: str) -> list[str]:
    out = []
    for display, addr in getaddresses([value]):
        if addr or display:
            out.append(str(Address(display_name=display, addr_spec=addr)) if display and addr else addr or display)
    return out


def _date(value: str) -> datetime | None:
    try:
        return parsedate_to_datetime(value) if value else None
    except (TypeError, ValueError, IndexError):
        return None


def _eml_mail(msg: Message, options: ParseOptions, depth: int) -> _Mail:
    ctype = msg.get_content_type()
    if ctype in _ENCRYPTED_TYPES and "signed-data" not in str(msg.get_param("smime-type", "")).lower():
        kind = "PGP/MIME" if ctype == "multipart/encrypted" else "S/MIME"
        raise ParseError(f"encrypted: {kind}-encrypted message ({ctype}); it cannot be read without the key")
    mail = _Mail(
        sender=", ".join(_addresses(_header(msg, "from"))),
        to=_addresses(_header(msg, "to")),
        cc=_addresses(_header(msg, "cc")),
        subject=_header(msg, "subject"),
        date=_date(_header(msg, "date")),
        message_id=_header(msg, "message-id"),
    )
    if msg.defects:
        mail.warnings.append("malformed MIME structure: " + "; ".join(type(d).__name__ for d in msg.defects[:3]))
    stack: list[Message] = [msg]
    while stack:
        part = stack.pop(0)
        ctype = part.get_content_type()
        disposition = part.get_content_disposition()
        filename = part.get_filename()
        if ctype == "message/rfc822" or (part.is_multipart() and part is not msg and disposition == "attachment"):
            inner = part.get_payload(0) if part.is_multipart() else None
            if isinstance(inner, Message):
                name = filename or (_header(inner, "subject") or "message") + ".eml"
                mail.attachments.append((name, _nested_eml(inner, options, depth)))
            continue
        if part.is_multipart():
            stack[:0] = [p for p in part.get_payload() if isinstance(p, Message)]
            continue
        if ctype in _SIGNATURE_TYPES:
            continue
        if disposition == "attachment" or (filename and disposition != "inline"):
            payload = part.get_payload(decode=True)
            raw = payload if isinstance(payload, bytes) else b""
            mail.attachments.append((filename or f"attachment.{part.get_content_subtype()}", raw))
        elif ctype == "text/plain":
            mail.plain.append(_decode(part, "text/plain body", mail.warnings))
        elif ctype == "text/html":
            mail.html.append(_decode(part, "text/html body", mail.warnings))
    return mail


def _nested_eml(inner: Message, options: ParseOptions, depth: int) -> Callable[[str], Document]:
    def parse(child_id: str) -> Document:
        if depth + 1 > MAX_DEPTH:
            raise LimitExceeded(f"attached messages nested deeper than {MAX_DEPTH} levels")
        return _assemble(child_id, _eml_mail(inner, options, depth + 1), None, options)

    return parse


def parse_eml(
    document_id: str, data: bytes, *, source: str | None = None, options: ParseOptions | None = None
) -> Document:
    """Parse an RFC 5322 / MIME message (``.eml``) into a Document with attachments as children."""
    options = options or ParseOptions()
    if len(data) > options.max_file_bytes:
        raise LimitExceeded(f"email of {len(data):,} bytes is over max_file_bytes ({options.max_file_bytes:,})")
    if not data.strip():
        raise ParseError("the email file is empty")
    msg = email.message_from_bytes(data, _class=EmailMessage, policy=policy.default)
    if not msg.keys():
        raise ParseError("not an email message: no headers found")
    return _assemble(document_id, _eml_mail(msg, options, 0), source, options)


# ---------------------------------------------------------------------------------------------- MSG
def _msg_mail(msg: Any, options: ParseOptions, depth: int) -> _Mail:
    header = getattr(msg, "header", None)
    head_ctype = (header.get_content_type() if isinstance(header, Message) and header.keys() else "").lower()
    class_type = str(getattr(msg, "classType", "") or "").lower()
    atts = list(getattr(msg, "attachments", []) or [])
    mimes = {str(getattr(a, "mimetype", "") or "").lower() for a in atts}
    names = {str(getattr(a, "longFilename", "") or "").lower() for a in atts}
    if (
        head_ctype in _ENCRYPTED_TYPES
        or "application/pgp-encrypted" in mimes
        or any(n.endswith(".pgp-encrypted") or n == "smime.p7m" for n in names)
        or (class_type.startswith("ipm.note.smime") and "multipartsigned" not in class_type)
    ):
        kind = "S/MIME" if "smime" in class_type or "smime.p7m" in names else "PGP/MIME"
        raise ParseError(f"encrypted: {kind}-encrypted Outlook message; it cannot be read without the key")
    date = _date(_header(header, "date")) if isinstance(header, Message) else None
    mail = _Mail(
        sender=", ".join(_addresses(str(getattr(msg, "sender", "") or ""))),
        to=_addresses(str(getattr(msg, "to", "") or "")),
        cc=_addresses(str(getattr(msg, "cc", "") or "")),
        subject=" ".join(str(getattr(msg, "subject", "") or "").split()),
        date=date or getattr(msg, "date", None),
        message_id=str(getattr(msg, "messageId", "") or ""),
    )
    body = getattr(msg, "body", None)
    mail.plain.append(body if isinstance(body, str) else "")
    try:
        html = msg.htmlBody
    except Exception as exc:  # extract-msg derives HTML from RTF and can fail on odd bodies
        mail.warnings.append(f"HTML body unreadable: {exc}")
        html = None
    if isinstance(html, bytes):
        mail.html.append(html.decode("utf-8", errors="replace"))
    for att in atts:
        if getattr(att, "hidden", False):
            continue  # inline images referenced by the HTML body
        name = str(getattr(att, "longFilename", None) or getattr(att, "shortFilename", None) or "attachment")
        data = getattr(att, "data", None)
        if isinstance(data, bytes):
            mail.attachments.append((name, data))
        elif data is not None and hasattr(data, "subject"):  # an embedded Outlook message
            mail.attachments.append((name if "." in name else f"{name}.msg", _nested_msg(data, options, depth)))
        else:
            mail.warnings.append(f"attachment {name} not indexed: its content is not stored in the message")
    return mail


def _nested_msg(inner: Any, options: ParseOptions, depth: int) -> Callable[[str], Document]:
    def parse(child_id: str) -> Document:
        if depth + 1 > MAX_DEPTH:
            raise LimitExceeded(f"attached messages nested deeper than {MAX_DEPTH} levels")
        return _assemble(child_id, _msg_mail(inner, options, depth + 1), None, options)

    return parse


def parse_msg(
    document_id: str, data: bytes, *, source: str | None = None, options: ParseOptions | None = None
) -> Document:
    """Parse an Outlook ``.msg`` file (OLE/CFB) into the same Document shape as :func:`parse_eml`."""
    options = options or ParseOptions()
    if len(data) > options.max_file_bytes:
        raise LimitExceeded(f"MSG of {len(data):,} bytes is over max_file_bytes ({options.max_file_bytes:,})")
    extract_msg = require("extract_msg", "office", "Outlook .msg parsing")
    try:
        msg = extract_msg.openMsg(io.BytesIO(data), delayAttachments=False)
    except Exception as exc:  # extract-msg raises many types (olefile OSError, InvalidFileFormatError …)
        raise ParseError(f"corrupt Outlook message: {type(exc).__name__}: {exc}") from exc
    try:
        return _assemble(document_id, _msg_mail(msg, options, 0), source, options)
    finally:
        msg.close()

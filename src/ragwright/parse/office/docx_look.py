"""Whether a DOCX run can be seen: hidden properties, size and colour, resolved as Word resolves them.

A run's properties come from the document defaults, its paragraph style (``basedOn`` chain), its
character style (``w:rStyle``, its chain) and its own ``w:rPr``, later ones winning. A run is hidden
when, so resolved:

* ``w:vanish`` (hidden text), ``w:specVanish`` or ``w:webHidden`` is on;
* its size is under :data:`~ragwright.parse.visibility.MIN_FONT_PT` (``w:sz`` counts half-points);
* its colour cannot be told from the background under it (:func:`~ragwright.parse.visibility.indistinct`):
  the run's shading or highlight, else its paragraph's shading, else its table cell's shading, else the
  page background (``w:background``, white by default). Inside a text box, or a table with a table
  style (whose shading is not resolved here), the background is unknown and colour hides nothing.
"""

from __future__ import annotations

from typing import Any, Final

from ragwright.parse.visibility import WHITE, Rgb, hex_rgb, indistinct, tiny

_W: Final = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_HIDING: Final = ("vanish", "specVanish", "webHidden")
_HIGHLIGHT: Final[dict[str, Rgb]] = {
    "black": (0, 0, 0), "blue": (0, 0, 255), "cyan": (0, 255, 255), "green": (0, 255, 0),
    "magenta": (255, 0, 255), "red": (255, 0, 0), "yellow": (255, 255, 0), "white": (255, 255, 255),
    "darkBlue": (0, 0, 128), "darkCyan": (0, 128, 128), "darkGreen": (0, 128, 0),
    "darkMagenta": (128, 0, 128), "darkRed": (128, 0, 0), "darkYellow": (128, 128, 0),
    "darkGray": (128, 128, 128), "lightGray": (192, 192, 192),
}  # fmt: skip
_UNKNOWN: Final = "unknown"  # a background that cannot be resolved


def _props(rpr: Any) -> dict[str, Any]:
    """The visibility-relevant properties set in one ``w:rPr`` (unset ones absent)."""
    out: dict[str, Any] = {}
    if rpr is None:
        return out
    for name in _HIDING:
        node = rpr.find(_W + name)
        if node is not None:
            out[name] = node.get(_W + "val", "true") not in ("0", "false", "off")
    color = rpr.find(_W + "color")
    if color is not None and color.get(_W + "val"):
        out["color"] = color.get(_W + "val")
    size = rpr.find(_W + "sz")
    if size is not None and (size.get(_W + "val") or "").isdigit():
        out["sz"] = int(size.get(_W + "val"))
    highlight = rpr.find(_W + "highlight")
    if highlight is not None and highlight.get(_W + "val") in _HIGHLIGHT:
        out["background"] = _HIGHLIGHT[highlight.get(_W + "val")]
    shading = _shading(rpr)
    if shading is not None:
        out["background"] = shading
    return out


def _shading(pr: Any) -> Rgb | None:
    """The fill of a ``w:shd`` under *pr* (rPr, pPr or tcPr), when it is a colour."""
    node = None if pr is None else pr.find(_W + "shd")
    return None if node is None else hex_rgb(node.get(_W + "fill"))


class RunLook:
    """Resolves run visibility for one document (its styles part and its body's page background)."""

    def __init__(self, styles_root: Any, document_root: Any) -> None:
        self.styles: dict[str, tuple[str | None, dict[str, Any]]] = {}
        self.default_paragraph: str | None = None
        self.defaults: dict[str, Any] = {}
        if styles_root is not None:
            for st in styles_root.iter(_W + "style"):
                sid = st.get(_W + "styleId")
                if not sid:
                    continue
                based = st.find(_W + "basedOn")
                self.styles[sid] = (None if based is None else based.get(_W + "val"), _props(st.find(_W + "rPr")))
                kind = st.get(_W + "type", "paragraph")
                if kind == "paragraph" and st.get(_W + "default") in ("1", "true") and self.default_paragraph is None:
                    self.default_paragraph = sid
            self.defaults = _props(styles_root.find(f"{_W}docDefaults/{_W}rPrDefault/{_W}rPr"))
        page = None if document_root is None else document_root.find(_W + "background")
        self.page: Rgb = (hex_rgb(page.get(_W + "color")) if page is not None else None) or WHITE
        self._paragraphs: dict[Any, tuple[dict[str, Any], Rgb | str]] = {}

    def _chain(self, style_id: str | None) -> dict[str, Any]:
        """Properties of a style with its ``basedOn`` ancestors (the style's own win)."""
        chain: list[dict[str, Any]] = []
        seen: set[str] = set()
        while style_id and style_id in self.styles and style_id not in seen:
            seen.add(style_id)
            based, props = self.styles[style_id]
            chain.append(props)
            style_id = based
        merged: dict[str, Any] = {}
        for props in reversed(chain):
            merged.update(props)
        return merged

    def _paragraph(self, p: Any) -> tuple[dict[str, Any], Rgb | str]:
        """A paragraph's style properties and the background its runs sit on."""
        cached = self._paragraphs.get(p)
        if cached is not None:
            return cached
        ppr = None if p is None else p.find(_W + "pPr")
        pstyle = ppr.find(_W + "pStyle") if ppr is not None else None
        style_id = pstyle.get(_W + "val") if pstyle is not None else self.default_paragraph
        props = {**self.defaults, **self._chain(style_id)}
        background: Rgb | str = _shading(ppr) or self._container(p)
        self._paragraphs[p] = (props, background)
        return props, background

    def _container(self, p: Any) -> Rgb | str:
        """The background a paragraph sits on: its table cell's shading, or the page."""
        if p is None:
            return self.page
        for ancestor in p.iterancestors():
            tag = ancestor.tag
            if tag == _W + "txbxContent":
                return _UNKNOWN
            if tag == _W + "tc":
                fill = _shading(ancestor.find(_W + "tcPr"))
                if fill is not None:
                    return fill
            if tag == _W + "tbl":
                tblpr = ancestor.find(_W + "tblPr")
                if tblpr is not None and tblpr.find(_W + "tblStyle") is not None:
                    return _UNKNOWN
        return self.page

    def hidden(self, run: Any) -> bool:
        """Whether the ``w:r`` *run* cannot be seen (see the module docstring)."""
        ancestors = getattr(run, "iterancestors", None)  # notes and comments are xml.etree: no parents
        p = next(ancestors(_W + "p"), None) if ancestors is not None else None
        props, background = self._paragraph(p)
        rpr = run.find(_W + "rPr")
        rstyle = None if rpr is None else rpr.find(_W + "rStyle")
        look = {**props}
        if rstyle is not None:
            look.update(self._chain(rstyle.get(_W + "val")))
        look.update(_props(rpr))
        if any(look.get(name) for name in _HIDING):
            return True
        if "sz" in look and tiny(look["sz"] / 2):
            return True
        color = hex_rgb(look.get("color"))  # "auto" is black or white, whichever shows
        under = look.get("background", background)
        return color is not None and not isinstance(under, str) and indistinct(color, under)

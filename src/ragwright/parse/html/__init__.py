"""HTML parsing, one package: the parser (:mod:`~ragwright.parse.html.parser`: main content, structure,
metadata), hidden-content removal (:mod:`~ragwright.parse.html.clean`) on the page's own CSS
(:mod:`~ragwright.parse.html.css`), and dates and page metadata (:mod:`~ragwright.parse.html.meta`).

``from ragwright.parse.html import parse_html`` is the entry point (the parser registry's ``html``).
"""

from ragwright.parse.html.parser import VERSION, html_elements, parse_html

__all__ = ["VERSION", "html_elements", "parse_html"]

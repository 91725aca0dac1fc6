"""Office Open XML parsing, one package: DOCX (:mod:`~ragwright.parse.office.docx`), XLSX and CSV
(:mod:`~ragwright.parse.office.xlsx`) and PPTX (:mod:`~ragwright.parse.office.pptx`), each with its
``*_look`` module (what makes text unreadable in that format), over the shared package handling of
:mod:`~ragwright.parse.office.ooxml` (safe unzipping, size limits, core properties, tables).

Nothing is imported here: the parser registry loads each format's module when a file of it arrives.
"""

"""Metadata of an HTML page: meta tags, ``link rel=canonical`` and JSON-LD, read before any stripping."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urljoin


def iso_date(value: Any) -> str | None:
    """An ISO-8601 string for a date given as ISO or RFC 2822 text, or ``None`` when unreadable."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        return date.fromisoformat(text).isoformat() if len(text) == 10 else datetime.fromisoformat(text).isoformat()
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(text[:10]).date().isoformat()
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(text).isoformat()
    except (TypeError, ValueError, IndexError):
        return None


def _json_ld(root: Any) -> Iterator[dict[str, Any]]:
    """Every JSON object inside ``application/ld+json`` scripts (``@graph`` and lists flattened)."""
    for script in root.iter("script"):
        if "ld+json" not in (script.get("type") or "").lower() or not script.text:
            continue
        try:
            stack: list[Any] = [json.loads(script.text[:1_000_000])]
        except ValueError:
            continue
        while stack:
            item = stack.pop()
            if isinstance(item, list):
                stack.extend(item)
            elif isinstance(item, dict):
                yield item
                if isinstance(item.get("@graph"), list):
                    stack.extend(item["@graph"])


def _ld_author(value: Any) -> str | None:
    if isinstance(value, list):
        names = [n for n in (_ld_author(v) for v in value) if n]
        return ", ".join(names) or None
    if isinstance(value, dict):
        value = value.get("name")
    return value.strip() if isinstance(value, str) and value.strip() else None


def page_metadata(root: Any, source: str | None) -> dict[str, Any]:
    """Metadata read from the page head (before any stripping): meta tags, link rel, JSON-LD."""
    metas: dict[str, str] = {}
    for tag in root.iter("meta"):
        key = tag.get("property") or tag.get("name") or tag.get("itemprop") or tag.get("http-equiv")
        content = (tag.get("content") or "").strip()
        if key and content:
            metas.setdefault(key.strip().lower(), content)
    ld = [{str(k).lower(): v for k, v in obj.items()} for obj in _json_ld(root)]

    def first(*keys: str) -> str | None:
        for key in keys:
            if metas.get(key):
                return metas[key]
            for obj in ld:
                if isinstance(obj.get(key), str) and obj[key].strip():
                    return str(obj[key]).strip()
        return None

    meta: dict[str, Any] = {}
    meta["page_title"] = next((t for t in (t.text_content().strip() for t in root.iter("title")) if t), None)
    meta["title"] = first("og:title", "twitter:title", "headline")
    meta["language"] = (root.get("lang") or root.get("{http://www.w3.org/XML/1998/namespace}lang") or "").strip()
    meta["language"] = meta["language"] or metas.get("content-language") or metas.get("og:locale")
    base = next((b.get("href") for b in root.iter("base") if b.get("href")), None)
    base = base or metas.get("og:url") or (source if source and source.startswith(("http://", "https://")) else None)
    canonical = next(
        (ln.get("href") for ln in root.iter("link") if "canonical" in (ln.get("rel") or "").lower().split()), None
    )
    canonical = (canonical or "").strip() or metas.get("og:url")
    meta["canonical_url"] = urljoin(base, canonical) if canonical and base else canonical
    meta["created_at"] = iso_date(
        first("article:published_time", "datepublished", "date", "pubdate", "publishdate", "dc.date.issued",
              "dc.date", "dcterms.created", "datecreated")
    )  # fmt: skip
    meta["updated_at"] = iso_date(
        first("article:modified_time", "og:updated_time", "datemodified", "last-modified", "dcterms.modified")
    )
    author = metas.get("author") or metas.get("dc.creator")
    if not author:
        by = metas.get("article:author", "")
        author = by if by and not by.startswith(("http://", "https://")) else None
    meta["author"] = author or next((a for a in (_ld_author(o.get("author")) for o in ld) if a), None)
    meta["site_name"] = metas.get("og:site_name")
    return {k: v for k, v in meta.items() if v}

"""``/docs`` (Swagger UI) and ``/redoc`` (ReDoc) from assets installed with the server, never a CDN.

FastAPI's own pages load Swagger UI and ReDoc from jsDelivr (and ReDoc's fonts from Google), so offline —
or behind a firewall, or under a strict content policy — they are blank. The scripts and styles come
from the ``fastapi-offline`` package (MIT; it ships swagger-ui-dist, Apache-2.0, and ReDoc's standalone
bundle, MIT — about 2.8 MB unpacked, in the ``[server]`` extra) and are served at ``/docs-assets/``.

FastAPI reads the endpoints' annotations when they are registered: no postponed annotations here.
"""

from pathlib import Path
from typing import TYPE_CHECKING

from ragwright._deps import require

if TYPE_CHECKING:
    from fastapi import FastAPI

ASSETS_URL = "/docs-assets"
FILES = ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js", "favicon.png")
#: The pages may load nothing from elsewhere: ReDoc's footer logo (cdn.redoc.ly) and Swagger's validator
#: badge are never requested, whatever the bundles' defaults.
CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; "
    "frame-ancestors 'self'"
)
#: Hides ReDoc's "API docs by Redocly" logo, an image from its CDN that the policy above blocks.
_REDOC_STYLE = '<style>a[href*="redocly.com"] { display: none; }</style>'


def assets_dir() -> Path:
    """The folder holding Swagger UI's and ReDoc's files (the ``fastapi-offline`` package's ``static``)."""
    module = require("fastapi_offline", "server", "the offline /docs and /redoc pages")
    folder = Path(str(module.__file__)).parent / "static"
    missing = [name for name in FILES if not (folder / name).is_file()]
    if missing:
        from ragwright.errors import MissingDependencyError

        raise MissingDependencyError("fastapi_offline", "server", f"the /docs assets ({', '.join(missing)} missing)")
    return folder


def add_docs(app: "FastAPI", title: str) -> None:
    """Serve ``/docs``, its OAuth2 redirect and ``/redoc`` from :func:`assets_dir` (routes outside the schema)."""
    from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
    from fastapi.staticfiles import StaticFiles
    from starlette.requests import Request
    from starlette.responses import HTMLResponse

    app.mount(ASSETS_URL, StaticFiles(directory=assets_dir()), name="docs-assets")
    openapi_url = app.openapi_url or "/openapi.json"
    redirect_url = app.swagger_ui_oauth2_redirect_url or "/docs/oauth2-redirect"

    async def swagger(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        page = get_swagger_ui_html(
            openapi_url=f"{root}{openapi_url}",
            title=f"{title} - Swagger UI",
            oauth2_redirect_url=f"{root}{redirect_url}",
            swagger_js_url=f"{root}{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
            swagger_ui_parameters={"validatorUrl": None, **(app.swagger_ui_parameters or {})},
        )
        page.headers["Content-Security-Policy"] = CSP
        return page

    async def oauth2_redirect(_request: Request) -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        page = get_redoc_html(
            openapi_url=f"{root}{openapi_url}",
            title=f"{title} - ReDoc",
            redoc_js_url=f"{root}{ASSETS_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
            with_google_fonts=False,
        )
        html = bytes(page.body).decode("utf-8").replace("</head>", _REDOC_STYLE + "</head>", 1)
        return HTMLResponse(html, headers={"Content-Security-Policy": CSP})

    app.add_route("/docs", swagger, include_in_schema=False)
    app.add_route(redirect_url, oauth2_redirect, include_in_schema=False)
    app.add_route("/redoc", redoc, include_in_schema=False)

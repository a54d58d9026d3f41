"""No CDN: every script, stylesheet and icon a page uses is served by the service itself."""
import re

import pytest
import requests

pytestmark = pytest.mark.service(per_module=True)  # each test names its own tools

PAGES = ["/signin", "/tools", "/tools/new", "/projects", "/playground", "/calls"]
ASSET = re.compile(r'<(?:script|link|img)\b[^>]*?\b(?:src|href)="([^"]*)"')
TYPES = {".css": "text/css", ".js": "text/javascript"}


@pytest.mark.parametrize("path", PAGES)
def test_a_page_uses_only_the_services_own_assets(service, admin, path):
    page = admin.get(path)
    assert page.status == 200
    assets = ASSET.findall(page.text)
    assert assets, "every page loads the stylesheet and the script"
    for url in assets:
        if url.startswith("data:"):
            continue
        assert url.startswith("/") and not url.startswith("//"), url
        response = requests.get(service.url + url, timeout=10)
        assert response.status_code == 200, url
        assert response.headers["Content-Type"].startswith(TYPES[url[url.rindex("."):]])


def test_the_policy_forbids_scripts_from_anywhere_else(service):
    policy = requests.get(service.url + "/signin", timeout=10).headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "default-src 'self'" in policy and "frame-ancestors 'none'" in policy


def test_no_page_has_inline_script(service, admin):
    for path in PAGES:
        assert not re.search(r"<script(?![^>]*\bsrc=)", admin.get(path).text), path

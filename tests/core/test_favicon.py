"""/favicon.ico: browsers ask for it on every site; it leads to the icon the pages link."""

from xml.etree import ElementTree

from django.contrib.staticfiles import finders
from django.test import Client


def test_favicon_ico_redirects_permanently_to_the_static_icon_the_pages_link(db):
    response = Client().get("/favicon.ico")

    assert (response.status_code, response["Location"]) == (301, "/static/favicon.svg")
    page = Client().get("/accounts/login/").content.decode()
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in page


def test_the_icon_is_an_svg_image():
    path = finders.find("favicon.svg")

    assert ElementTree.parse(path).getroot().tag == "{http://www.w3.org/2000/svg}svg"

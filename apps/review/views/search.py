"""SCAFFOLD: to be written."""

from django.http import HttpResponse

from apps.review.access import agent_page


@agent_page
def search(request, access, **kwargs):
    return HttpResponse("scaffold", status=501)

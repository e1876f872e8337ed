"""SCAFFOLD: to be written."""

from django.http import HttpResponse

from apps.review.access import agent_page


@agent_page
def entry_list(request, access, **kwargs):
    return HttpResponse("scaffold", status=501)


@agent_page
def entry_detail(request, access, **kwargs):
    return HttpResponse("scaffold", status=501)


@agent_page
def history_month(request, access, **kwargs):
    return HttpResponse("scaffold", status=501)

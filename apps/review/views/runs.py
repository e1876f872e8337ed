"""SCAFFOLD: to be written."""

from django.http import HttpResponse

from apps.review.access import agent_action, agent_page


@agent_page
def run_list(request, access, **kwargs):
    return HttpResponse("scaffold", status=501)


@agent_page
def run_detail(request, access, **kwargs):
    return HttpResponse("scaffold", status=501)


@agent_action
def run_retry(request, access, **kwargs):
    return HttpResponse("scaffold", status=501)

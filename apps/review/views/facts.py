"""SCAFFOLD: to be written."""

from django.http import HttpResponse

from apps.review.access import agent_action, agent_form, agent_page


@agent_page
def fact_list(request, access, **kwargs):
    return HttpResponse("scaffold", status=501)


@agent_page
def fact_detail(request, access, **kwargs):
    return HttpResponse("scaffold", status=501)


@agent_form
def fact_edit(request, access, **kwargs):
    return HttpResponse("scaffold", status=501)


@agent_action
def fact_delete(request, access, **kwargs):
    return HttpResponse("scaffold", status=501)

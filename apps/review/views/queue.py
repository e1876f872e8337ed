"""SCAFFOLD: to be written."""

from django.http import HttpResponse

from apps.review.access import agent_action, agent_form, agent_page


@agent_page
def queue(request, access, **kwargs):
    return HttpResponse("scaffold", status=501)


@agent_action
def queue_approve(request, access, **kwargs):
    return HttpResponse("scaffold", status=501)


@agent_form
def queue_edit(request, access, **kwargs):
    return HttpResponse("scaffold", status=501)


@agent_action
def queue_reject(request, access, **kwargs):
    return HttpResponse("scaffold", status=501)


@agent_action
def queue_merge(request, access, **kwargs):
    return HttpResponse("scaffold", status=501)

"""SCAFFOLD: to be written."""

from django.http import HttpResponse

from apps.review.access import agent_action, agent_form, agent_page


@agent_page
def learning_list(request, access, **kwargs):
    return HttpResponse("scaffold", status=501)


@agent_form
def learning_edit(request, access, **kwargs):
    return HttpResponse("scaffold", status=501)


@agent_form
def error_edit(request, access, **kwargs):
    return HttpResponse("scaffold", status=501)


@agent_action
def error_extend(request, access, **kwargs):
    return HttpResponse("scaffold", status=501)


@agent_action
def error_expire(request, access, **kwargs):
    return HttpResponse("scaffold", status=501)

"""SCAFFOLD: to be written."""

from django.http import HttpResponse


def dashboard(request, **kwargs):
    return HttpResponse("scaffold", status=501)

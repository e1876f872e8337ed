"""Forms of the curation pages. They parse input only; the services validate it again (the
one write path) and their InvalidInput/Conflict come back as form errors."""

from django import forms

from apps.conversations.selectors import MODES
from apps.learnings.models import LearningKind, LearningStatus, Outcome

MODE_CHOICES = [(m, m) for m in MODES]


class SearchForm(forms.Form):
    q = forms.CharField(required=False, strip=False, label="Query")
    mode = forms.ChoiceField(choices=MODE_CHOICES, required=False, initial="hybrid")
    session = forms.CharField(required=False, max_length=200, label="Session")


class FactForm(forms.Form):
    value = forms.CharField(widget=forms.Textarea, strip=False)
    category = forms.CharField(max_length=100)
    key = forms.CharField(max_length=200)
    importance = forms.FloatField(min_value=0.0, max_value=1.0)


class MergeForm(forms.Form):
    """The fact chosen to merge into; `confirm` is set by the confirmation step alone."""

    into = forms.IntegerField(min_value=1)
    confirm = forms.BooleanField(required=False)


class MergeSearchForm(forms.Form):
    q = forms.CharField(required=False, max_length=200, label="Search the candidates")


class LearningForm(forms.Form):
    content = forms.CharField(widget=forms.Textarea, strip=False)
    kind = forms.ChoiceField(choices=LearningKind.choices)
    status = forms.ChoiceField(choices=LearningStatus.choices)


class ErrorRecordForm(forms.Form):
    outcome = forms.ChoiceField(choices=Outcome.choices)
    strategy = forms.CharField(widget=forms.Textarea, required=False, strip=False)
    resolution = forms.CharField(widget=forms.Textarea, required=False, strip=False)


class ApiKeyForm(forms.Form):
    """A new API key's name and scope (issue 39); the service validates `user` again."""

    name = forms.CharField(max_length=100, required=False)
    user = forms.CharField(
        max_length=200,
        required=False,
        help_text="Bind the key to this end user: it acts as them and may name no other. "
        "Empty: every user.",
    )
    read_only = forms.BooleanField(required=False, help_text="Every write is refused.")

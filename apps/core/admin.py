"""The admin's branding, set once for the whole site (apps.core is installed first)."""

from django.contrib import admin

admin.site.site_header = "memoryhub administration"
admin.site.site_title = "memoryhub administration"
admin.site.index_title = "Curate agents, memory and keys"
admin.site.site_url = "/review/"  # "View site" opens the review pages

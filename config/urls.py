from django.contrib import admin
from django.urls import include, path
from django.views.generic import TemplateView
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from tutorbrain.admin_preview import block_preview

# An unexpected error under /api/ is JSON like every other API error.
handler500 = "tutorbrain.api.middleware.server_error"

admin.site.site_header = "tutor brain"
admin.site.site_title = "tutor brain admin"
admin.site.index_title = "Memory, concept maps and beliefs"

urlpatterns = [
    # The admin's "View site" goes here: what this server offers, with links.
    path("", TemplateView.as_view(template_name="home.html"), name="home"),
    path(
        "admin/tutorbrain/block-preview/",
        admin.site.admin_view(block_preview),
        name="block-preview",
    ),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema"), name="api-redoc"),
    path("api/v1/", include("tutorbrain.api.urls")),
]

"""Root URL configuration."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from config import health, profile


class APISchemaView(SpectacularAPIView):
    """The OpenAPI schema; ``?format=json`` or ``yaml``, ``?lang=``, ``?version=``."""

    #: Read by config.query_params: the schema view is not itself in the schema.
    query_parameters = ("format", "lang", "version")


class APIDocsView(SpectacularSwaggerSplitView):
    """The Swagger UI page: GET only (its HTML renderer has no template for OPTIONS)."""

    http_method_names = ["get", "head"]
    query_parameters = ("lang", "version", "script")


class APISchemaRedirectView(RedirectView):
    """``/api/schema/`` → the versioned schema, keeping the query string."""

    pattern_name = "api-schema"
    permanent = False
    query_string = True
    query_parameters = APISchemaView.query_parameters


urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    # Sign-ins here and at /admin/login/ are limited by config.throttling.ThrottledModelBackend.
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/profile/", profile.profile, name="profile"),
    path("api/v1/schema/", APISchemaView.as_view(), name="api-schema"),
    path("api/schema/", APISchemaRedirectView.as_view(), name="api-schema-unversioned"),
    path(
        "api/v1/docs/",
        APIDocsView.as_view(url_name="api-schema"),
        name="api-docs",
    ),
    path("api/v1/", include("judging.api.urls")),
    path("api/v1/", include("metrics.api.urls")),
    path("", include("judging.urls")),
    path("", include("metrics.urls")),
]

handler404 = "config.api.not_found"
handler400 = "config.api.bad_request"

"""Routes of the REST API, version 1. One APIView per endpoint."""

from __future__ import annotations

from django.urls import path

from tutorbrain.api.chain import ChainStatusView
from tutorbrain.api.health import HealthView

app_name = "api"

urlpatterns = [
    path("health/", HealthView.as_view(), name="health"),
    path(
        "pairs/<str:student>/<str:subject>/chain/", ChainStatusView.as_view(), name="chain-status"
    ),
]

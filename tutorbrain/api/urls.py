"""Routes of the REST API, version 1. One APIView per endpoint."""

from __future__ import annotations

from django.urls import path

from tutorbrain.api.block import MemoryBlockView
from tutorbrain.api.chain import ChainStatusView
from tutorbrain.api.episodes import AnswerStanceView, EpisodeAppendView, PairEpisodesView
from tutorbrain.api.files import FileDetailView, FileUploadView
from tutorbrain.api.health import HealthView, ReadinessView
from tutorbrain.api.reports import PairReportView

app_name = "api"

urlpatterns = [
    path("health/", HealthView.as_view(), name="health"),
    path("health/ready/", ReadinessView.as_view(), name="health-ready"),
    path("files/", FileUploadView.as_view(), name="file-upload"),
    path("files/<int:file_id>/", FileDetailView.as_view(), name="file-detail"),
    path("memory-block/", MemoryBlockView.as_view(), name="memory-block"),
    path(
        "pairs/<str:student>/<str:subject>/chain/", ChainStatusView.as_view(), name="chain-status"
    ),
    path("episodes/", EpisodeAppendView.as_view(), name="episode-append"),
    path(
        "pairs/<str:student>/<str:subject>/episodes/",
        PairEpisodesView.as_view(),
        name="pair-episodes",
    ),
    path("episodes/<int:episode_id>/stance/", AnswerStanceView.as_view(), name="answer-stance"),
    path("reports/<str:student>/<str:subject>/", PairReportView.as_view(), name="pair-report"),
]

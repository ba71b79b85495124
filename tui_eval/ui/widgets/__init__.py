"""Small widgets, one concern per file (the episode log keeps its header beside it). Each draws from plain
data or frozen snapshots the app hands it; none reads the engine or live statistics."""

from .comparison_table import ComparisonTable
from .episode_log import EpisodeLog, LogHeader
from .explore_screen import ExploreScreen
from .help_screen import HelpScreen
from .histograms import Histograms
from .run_header import RunHeader
from .seed_detail import SeedDetail
from .sparklines import Sparklines
from .status_line import StatusLine
from .verdict import VerdictBar

__all__ = ["ComparisonTable", "EpisodeLog", "ExploreScreen", "HelpScreen", "Histograms", "LogHeader",
           "RunHeader", "SeedDetail", "Sparklines", "StatusLine", "VerdictBar"]

"""The judging app's Celery tasks, one module per capability (found by autodiscovery)."""

from judging.imports.tasks import run_file_import
from judging.llm.tasks import run_llm_job, work_on_llm_job
from judging.quality.tasks import run_quality_check

__all__ = ["run_file_import", "run_llm_job", "run_quality_check", "work_on_llm_job"]

"""The Qt side of jobs: `JobManager` polls the runner from a timer (the GUI thread never blocks on a job)
and says what changed with signals; `JobsPanel` shows one row per job with progress, elapsed time, Cancel,
the error and, on request, its traceback. A finished job whose model revision is no longer the document's
is marked stale; undoing back to that revision makes it current again."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from ...jobs import CANCELLED, DONE, FAILED, Job, Runner

POLL_MS = 100
STATE_COLORS = {DONE: "#207020", FAILED: "#b02020", CANCELLED: "#806020"}
# tasks whose result does not come from the open model: an import reads a file and becomes the new document,
# so it is never stale (the document it replaced had another hash)
MODEL_FREE = {"urdf_import"}


class JobManager(QObject):
    """`changed(job)` on progress or state; `finished(job)` once, when a job ends in any state."""

    changed = Signal(object)
    finished = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = Runner()
        self.current_hash = ""
        self.timer = QTimer(self)
        self.timer.setInterval(POLL_MS)
        self.timer.timeout.connect(self.poll)

    def start(self, task: str, model_text: str, options: dict, title: str) -> Job:
        job = self.runner.submit(task, model_text, options, title)
        self.timer.start()
        self.changed.emit(job)
        return job

    def poll(self) -> None:
        for job in self.runner.poll():
            self.changed.emit(job)
            if not job.running:
                self.finished.emit(job)
        for job in self.runner.running:
            self.changed.emit(job)  # the elapsed time moves on
        if not self.runner.running:
            self.timer.stop()

    def cancel(self, job: Job) -> None:
        if job.running:
            job.cancel()
            self.changed.emit(job)
            self.finished.emit(job)

    def cancel_all(self) -> None:
        for job in self.running:
            self.cancel(job)

    @property
    def running(self) -> list[Job]:
        return self.runner.running

    @property
    def jobs(self) -> list[Job]:
        return self.runner.jobs

    def stale(self, job: Job) -> bool:
        return job.state == DONE and job.task not in MODEL_FREE and job.model_hash != self.current_hash

    def set_model_hash(self, model_hash: str) -> None:
        self.current_hash = model_hash
        for job in self.jobs:
            self.changed.emit(job)


class JobRow(QFrame):
    def __init__(self, manager: JobManager, job: Job, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.manager, self.job = manager, job
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.title = QLabel(f"<b>{job.title}</b>")
        self.title.setToolTip(job.title)
        self.state = QLabel()
        self.elapsed = QLabel()
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(lambda: manager.cancel(job))
        self.message = QLabel()
        for label in (self.title, self.message):  # long texts wrap onto more lines, never widening the dock
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Minimum)
            label.setWordWrap(True)
        self.details_button = QPushButton("Details…")
        self.details_button.setCheckable(True)
        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        self.details.setVisible(False)
        self.details_button.toggled.connect(self.details.setVisible)
        grid = QGridLayout(self)
        grid.addWidget(self.title, 0, 0, 1, 2)
        grid.addWidget(self.elapsed, 0, 2, Qt.AlignmentFlag.AlignRight)
        grid.addWidget(self.bar, 1, 0)
        grid.addWidget(self.state, 1, 1)
        grid.addWidget(self.cancel_button, 1, 2)
        grid.addWidget(self.message, 2, 0, 1, 2)
        grid.addWidget(self.details_button, 2, 2)
        grid.addWidget(self.details, 3, 0, 1, 3)
        grid.setColumnStretch(0, 1)
        self.refresh()

    def refresh(self) -> None:
        job = self.job
        stale = self.manager.stale(job)
        self.state.setText(job.state + (" · STALE" if stale else ""))
        color = "#b06000" if stale else STATE_COLORS.get(job.state, "")
        self.state.setStyleSheet(f"color: {color}; font-weight: bold;" if color else "")
        self.state.setToolTip("the model was edited after this job ran; run it again" if stale else "")
        self.bar.setValue(round(1000 * job.fraction))
        self.elapsed.setText(f"{job.elapsed:.1f} s")
        self.cancel_button.setVisible(job.running)
        self.message.setText(job.error or job.message)
        self.message.setToolTip(job.error or job.message)
        alarm = job.state == FAILED or not job.responding  # failed, or its process has gone silent
        self.message.setStyleSheet("color: #b02020;" if alarm else "")
        self.details_button.setVisible(bool(job.details))
        self.details.setPlainText(job.details)


class JobsPanel(QWidget):
    """Newest job first."""

    def __init__(self, manager: JobManager, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.manager = manager
        self.rows: dict[int, JobRow] = {}
        inner = QWidget()
        self.list = QVBoxLayout(inner)
        self.list.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.empty = QLabel("No jobs yet: start one from the Analysis menu.")
        self.list.addWidget(self.empty)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(inner)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(scroll)
        manager.changed.connect(self.show_job)

    def show_job(self, job: Job) -> None:
        row = self.rows.get(job.id)
        if row is None:
            self.empty.hide()
            row = self.rows[job.id] = JobRow(self.manager, job)
            self.list.insertWidget(0, row)
        row.refresh()

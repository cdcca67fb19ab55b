"""The open model without Qt: the document, the mechanism and pose shown, assembly, the results of jobs filed by
model revision and the table that routes finished jobs to their handlers. The window wires it to its docks; tests
and scripts drive it headless. (Not the workspace map of a parallel machine: that is the task `workspace`.)"""

from .pose import JobStarter, Pose
from .workspace import OpenDocument, Route, Workspace

__all__ = ["JobStarter", "OpenDocument", "Pose", "Route", "Workspace"]

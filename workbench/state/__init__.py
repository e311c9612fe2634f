"""The application's state without Qt: the document (session, selection, device, analyses), its undo commands
and undo stack, and the events that tell views what changed. The window adapts it to Qt signals
(gui/document.py); tests drive it directly."""

from workbench.state.document import NEW_DECLARATION, DocumentState, OperationState, new_session
from workbench.state.events import Event
from workbench.state.undo import Command, UndoStack

__all__ = ["NEW_DECLARATION", "Command", "DocumentState", "Event", "OperationState", "UndoStack", "new_session"]

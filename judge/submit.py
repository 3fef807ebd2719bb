"""The front of grading's old name: ``judge.grade`` is the front now (it loads no pipeline at
import, as this module did). Kept so that code written against ``judge.submit`` keeps working."""

from judge.grade import grade, hidden_from_learners
from judge.static_checks import forbidden_uses, static_verdict

__all__ = ["forbidden_uses", "grade", "hidden_from_learners", "static_verdict"]

"""Figures and diagrams shared by the notebooks: one style, deterministic output (no dates, no random colours).

Introduced in ``00_overview``. ``from helpers.plots import ...`` reaches every function of the package:

- :mod:`~helpers.plots.charts`: the series' style and colours, and the charts of counts, shares and errors;
- :mod:`~helpers.plots.diagrams`: the two diagram primitives (tensors to scale, a stack of sublayers);
- one module per topic with the pictures its notebook introduces (``embeddings``, ``attention`` ...).

Each function's docstring names the notebook that introduces it. Cells that draw end with ``plt.show()``
so nbval sees only the stable ``<Figure size ...>`` text.
"""

from .charts import *  # noqa: F401,F403
from .charts import COLOURS, apply_style  # noqa: F401
from .diagrams import *  # noqa: F401,F403
from .overview import *  # noqa: F401,F403
from .embeddings import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .feed_forward import *  # noqa: F401,F403
from .layer_norm import *  # noqa: F401,F403
from .heads import *  # noqa: F401,F403
from .bert import *  # noqa: F401,F403
from .decoders import *  # noqa: F401,F403
from .costs import *  # noqa: F401,F403
from .budgets import *  # noqa: F401,F403
from .modern import *  # noqa: F401,F403
from .today import *  # noqa: F401,F403
from .serving import *  # noqa: F401,F403
from .peak import *  # noqa: F401,F403
from .language import *  # noqa: F401,F403

"""mkdocs hook: show Sphinx cross-reference roles in docstrings (``:class:`X```) as plain code.

The docstrings use numpydoc with Sphinx roles so that they read well in an IDE and in ``help()``;
mkdocstrings renders the role's name literally, so the rendered ``:class:<code>X</code>`` loses the prefix.
"""

import re

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|data|obj|exc):<code>~?")


def on_page_content(html, **kwargs):
    return _ROLE.sub("<code>", html)

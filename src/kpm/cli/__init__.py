"""The ``kpm`` command-line interface (Typer).

Each topic lives in its own module with a ``register(app, reproduce)`` function
that adds its commands; heavy imports happen inside the commands, so
``kpm --help`` is fast.
"""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    name="kpm",
    help="Learning in kernel feature spaces by explicit projection: reproduce the papers, "
    "run the demo, draw the figures.",
    no_args_is_help=True,
    add_completion=False,
)
reproduce = typer.Typer(
    help="Reproduce a paper's table or figure with one command.", no_args_is_help=True
)
app.add_typer(reproduce, name="reproduce")

_MODULES = (
    "kpm.cli.demo",
    "kpm.cli.datasets_cmd",
    "kpm.cli.kpm_cmds",
    "kpm.cli.reproduce_kpm_cmds",
    "kpm.cli.relevance_cmds",
    "kpm.cli.denoise_cmds",
    "kpm.cli.reduced_set_cmds",
    "kpm.cli.scale_cmds",
)

for _name in _MODULES:
    importlib.import_module(_name).register(app, reproduce)


def main():  # console-script entry point
    app()

"""The ``kpm`` command-line interface (Typer).

Each topic lives in its own module with a ``register(app, reproduce)`` function that adds
its commands; heavy imports happen inside the commands, so ``kpm --help`` is fast. The
options and the way every command ends (errors, Ctrl-C, exit status) are shared through
:mod:`kpm_reproduce.cli.common`.
"""

from __future__ import annotations

import importlib
import typer

from kpm_reproduce.cli.common import Group

app = typer.Typer(
    name="kpm",
    cls=Group,  # parser errors: one `error:` line, exit 2
    help="Learning in kernel feature spaces by explicit projection: run the demo, reproduce "
    "the papers' tables and figures. Every command writes under --out (default: "
    "./kpm-results).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
reproduce = typer.Typer(
    help="Reproduce a paper's table or figure with one command (resumable with --resume).",
    no_args_is_help=True,
)
app.add_typer(reproduce, name="reproduce")


def _version(value: bool):
    if value:
        import kpm

        typer.echo(f"kpm {kpm.__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
):
    """Learning in kernel feature spaces by explicit projection."""


_MODULES = (
    "kpm_reproduce.cli.demo",
    "kpm_reproduce.cli.datasets_cmd",
    "kpm_reproduce.cli.data_cmds",
    "kpm_reproduce.cli.kpm_cmds",
    "kpm_reproduce.cli.reproduce_kpm_cmds",
    "kpm_reproduce.cli.relevance_cmds",
    "kpm_reproduce.cli.denoise_cmds",
    "kpm_reproduce.cli.reduced_set_cmds",
    "kpm_reproduce.cli.scale_cmds",
)

for _name in _MODULES:
    importlib.import_module(_name).register(app, reproduce)


def main():  # console-script entry point
    app()

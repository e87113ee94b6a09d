"""Terminal output and error handling shared by the CLI commands."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NoReturn

import typer
from rich.console import Console

from skadapt.errors import SkadaptError, StageNotAvailableError

console = Console(stderr=True)
"""Messages, progress and errors (stderr)."""
out = Console()
"""Results: tables and reports (stdout)."""

EXIT_USER_ERROR = 1
EXIT_NOT_AVAILABLE = 2


def fail(message: str, code: int = EXIT_USER_ERROR) -> NoReturn:
    """Print an error message and exit with ``code``."""
    console.print(f"[bold red]error:[/] {message}", highlight=False, markup=True, soft_wrap=True)
    raise typer.Exit(code)


def handle_errors(function: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator: user-facing errors become one clear message and an exit code, never a traceback."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except StageNotAvailableError as error:
            fail(str(error), EXIT_NOT_AVAILABLE)
        except SkadaptError as error:
            fail(str(error))
        except FileNotFoundError as error:
            fail(f"file not found: {error.filename or error}")

    return wrapper

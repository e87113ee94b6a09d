"""Terminal output and error handling shared by the CLI commands: messages, progress, warnings, errors."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NoReturn

import click
import typer
from rich.console import Console
from rich.markup import escape

from skadapt import stop
from skadapt.errors import (
    LOG_ONLY,
    NOT_FOUND,
    SkadaptError,
    StageFailedError,
    UsageError,
    classify_error,
    describe_error,
)

console = Console(stderr=True)
"""Messages, progress and errors (stderr)."""
out = Console()
"""Results: tables and reports (stdout)."""

EXIT_USER_ERROR = 1
"""An error in the data or the run: a missing or malformed input, a failed stage, an unreachable server."""
EXIT_USAGE = 2
"""A usage error: the command line itself (an option value, an argument, options that exclude each other);
typer/click's own usage errors exit 2 too; a stop signal exits 128 + its number: Ctrl-C 130, SIGTERM 143
(:mod:`skadapt.stop`)."""

PROGRESS_ENV = "SKADAPT_PROGRESS"
"""``1`` shows progress bars even when stderr is not a terminal, ``0`` hides them; unset: terminals only."""
VERBOSE_ENV = "SKADAPT_VERBOSE"
"""Set (non-empty, not ``0``) to show third-party progress bars, trainers' loss printouts and known-harmless
library warnings on the console as ``--verbose`` does."""
DEBUG_ENV = "SKADAPT_DEBUG"
"""Set (non-empty) to let unexpected errors of standalone commands end in their traceback."""


def fail(message: str, code: int = EXIT_USER_ERROR) -> NoReturn:
    """Print an error message and exit with ``code``."""
    console.print(
        f"[bold red]error:[/] {escape(message)}", highlight=False, markup=True, soft_wrap=True, emoji=False
    )
    raise typer.Exit(code)


def usage_error(message: str) -> NoReturn:
    """Print a usage error (a bad option value or argument, options that exclude each other) and exit 2."""
    fail(message, EXIT_USAGE)


# ----------------------------------------------------------------------------------------------- progress


def progress_enabled(show: bool | None = None) -> bool:
    """Whether to draw progress bars: ``show`` if given, else ``$SKADAPT_PROGRESS``, else whether stderr
    is a terminal."""
    if show is not None:
        return show
    setting = os.environ.get(PROGRESS_ENV, "").strip().lower()
    if setting in {"1", "true", "yes", "on"}:
        return True
    if setting in {"0", "false", "no", "off"}:
        return False
    return console.is_terminal


class Bar:
    """One line of a progress display; every method is a no-op when progress is off.

    ``advance`` moves the bar (its ``unit``); ``count`` adds to a separate tally of ``rate_unit`` items
    (e.g. texts encoded while the bar counts tasks) whose throughput is shown. Without ``count`` calls the
    throughput is that of the bar itself.
    """

    def __init__(self, progress: Any = None, task: Any = None) -> None:
        self._progress = progress
        self._task = task

    @property
    def enabled(self) -> bool:
        """Whether the bar is drawn."""
        return self._progress is not None

    def advance(self, amount: float = 1) -> None:
        """Move the bar by ``amount`` units."""
        if self._progress is not None:
            self._progress.advance(self._task, amount)

    def count(self, amount: int) -> None:
        """Add ``amount`` items to the throughput tally."""
        if self._progress is not None:
            fields = self._progress.tasks[self._task].fields
            self._progress.update(self._task, counted=(fields.get("counted") or 0) + amount)

    def describe(self, description: str) -> None:
        """Change the bar's label."""
        if self._progress is not None:
            self._progress.update(self._task, description=escape(description))


class ProgressGroup:
    """Bars drawn together (one rich ``Progress``), or no-op bars when progress is off."""

    def __init__(self, progress: Any = None) -> None:
        self._progress = progress

    def bar(
        self, description: str, total: float | None, unit: str = "texts", rate_unit: str | None = None
    ) -> Bar:
        """Add a bar of ``total`` ``unit``s; its throughput is shown in ``rate_unit`` per second."""
        if self._progress is None:
            return Bar()
        task = self._progress.add_task(
            escape(description), total=total, unit=unit, rate_unit=rate_unit or unit, counted=None
        )
        return Bar(self._progress, task)


def _columns() -> tuple[Any, ...]:
    from rich.progress import (
        BarColumn,
        ProgressColumn,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.table import Column
    from rich.text import Text

    class ThroughputColumn(ProgressColumn):
        """Average throughput since the bar started: the bar's units, or the separately counted items."""

        def render(self, task: Any) -> Text:
            counted = task.fields.get("counted")
            unit = task.fields.get("rate_unit", "items")
            done = task.completed if counted is None else counted
            elapsed = task.finished_time if task.finished else task.elapsed
            rate = f"{done / elapsed:,.1f}" if elapsed else "?"
            shown = f"{counted:,} {unit}  " if counted is not None else ""
            return Text(f"{shown}{rate} {unit}/s", style="progress.data.speed")

    return (
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:,.0f}/{task.total:,.0f} {task.fields[unit]}"),
        ThroughputColumn(table_column=Column(no_wrap=True)),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )


@contextlib.contextmanager
def progress_group(show: bool | None = None) -> Iterator[ProgressGroup]:
    """Progress bars with throughput on the stderr console (see :func:`progress_enabled`)."""
    if not progress_enabled(show):
        yield ProgressGroup()
        return
    from rich.progress import Progress

    with Progress(*_columns(), console=console, transient=False) as progress:
        yield ProgressGroup(progress)


def _batch_size(args: tuple[Any, ...], output: Any) -> int:
    """Texts in one forward pass of a sentence-transformers model (features in, features out)."""
    for features in (output, args[0] if args else None):
        if isinstance(features, Mapping):  # a dict or transformers' BatchEncoding
            for key in ("sentence_embedding", "input_ids", "attention_mask"):
                value = features.get(key)
                shape = getattr(value, "shape", None)
                if shape:
                    return int(shape[0])
    return 0


@contextlib.contextmanager
def counting_forward_passes(
    model: Any, on_batch: Callable[[int], None], enabled: bool = True
) -> Iterator[None]:
    """Call ``on_batch(texts)`` after every forward pass of a torch module (a sentence-transformers model).

    ``encode`` runs one forward pass per batch, so this reports progress inside a single ``encode`` call
    without changing how texts are batched (the embeddings stay exactly those of one call).
    """
    register = getattr(model, "register_forward_hook", None)
    if not enabled or register is None:
        yield
        return
    handle = register(lambda module, args, output: on_batch(_batch_size(args, output)))
    try:
        yield
    finally:
        handle.remove()


def encode_texts(model: Any, texts: list[str], description: str, **kwargs: Any) -> Any:
    """``model.encode(texts, **kwargs)`` in one call (the embeddings exactly those of one call) under one
    skadapt bar of the texts encoded; sentence-transformers' own ``Batches`` bar only where its logger is
    at INFO (with ``--verbose``: see :data:`QUIET_LOGGERS`)."""
    with progress_group() as bars:
        bar = bars.bar(description, total=len(texts), unit="texts")
        with counting_forward_passes(model, bar.advance, enabled=bar.enabled):
            return model.encode(texts, **kwargs)


@contextlib.contextmanager
def training_console(trainer: Any, label: str) -> Iterator[None]:
    """While ``trainer`` (a transformers ``Trainer``) trains, with third-party output off the console
    (:func:`libraries_quiet`): its logs (the loss dicts transformers prints) go to the ``skadapt`` log, i.e.
    ``run.log``, and one skadapt bar (rank 0's) shows its steps and last loss. Otherwise nothing changes."""
    if not libraries_quiet():
        yield
        return
    from transformers.trainer_callback import PrinterCallback, ProgressCallback, TrainerCallback

    log = logging.getLogger("skadapt.console")

    class TrainingLog(TrainerCallback):  # type: ignore[misc]
        def __init__(self, bars: ProgressGroup) -> None:
            self.bars = bars
            self.bar = Bar()
            self.step = 0

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.bar = self.bars.bar(label, total=state.max_steps, unit="steps")
            self.bar.advance(state.global_step)  # a resumed training starts at its checkpoint's step
            self.step = state.global_step

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.bar.advance(state.global_step - self.step)
            self.step = state.global_step

        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
            if not state.is_world_process_zero or not logs:
                return
            shown = ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in logs.items())
            log.info("%s: step %d: %s", label, state.global_step, shown)
            if "loss" in logs:
                self.bar.describe(f"{label}: loss {logs['loss']:.4g}")

    for printing in (PrinterCallback, ProgressCallback):
        trainer.remove_callback(printing)
    with progress_group(None if trainer.is_world_process_zero() else False) as bars:
        callback = TrainingLog(bars)
        trainer.add_callback(callback)
        try:
            yield
        finally:
            trainer.remove_callback(callback)


# ----------------------------------------------------------------------------------------------- warnings


HARMLESS = (
    "TracerWarning",  # torch.onnx export of a traced model: the graph is checked against PyTorch after
    "Exporting aten::index operator",
    "warmup_ratio",  # transformers' deprecation of the training argument fine-tuning passes on
    "PAD/BOS/EOS",  # the tokenizer's special tokens copied into the model config
    "pre-processing before quantization",  # onnxruntime's quantizer advice (root logger)
    "pin_memory",
    "To copy construct from a tensor",
    "get_sentence_embedding_dimension",
    "fill_missing parameter is deprecated",
    "mtime may not be reliable",  # transformers orders checkpoints by their number instead
)
"""Known-harmless third-party warnings (a piece of their text): in the run's log only, on the console with
``--verbose``."""
QUIET_LOGGERS = ("sentence_transformers",)
"""Third-party loggers held at WARNING without ``--verbose``: sentence-transformers draws its ``Batches``
bar whenever its logger passes INFO (its INFO lines, evaluator figures, then stay out of the log too)."""


def verbose_console(flag: bool = False) -> bool:
    """Whether the console shows third-party progress bars and notices: ``flag`` (``--verbose``), else
    ``$SKADAPT_VERBOSE``."""
    return flag or os.environ.get(VERBOSE_ENV, "") not in ("", "0")


def libraries_quiet() -> bool:
    """Whether third-party progress bars and printouts are off the console: inside :func:`quiet_libraries`
    (in this process or the one that started it: ``TQDM_DISABLE`` is set)."""
    return os.environ.get("TQDM_DISABLE", "").strip().lower() not in ("", "0", "false", "no", "off")


def third_party_notice(record: logging.LogRecord) -> bool:
    """Whether a record is a known-harmless third-party warning (:data:`HARMLESS`)."""
    if record.name == "skadapt" or record.name.startswith("skadapt."):
        return False
    text = record.getMessage()
    return any(piece in text for piece in HARMLESS)


@contextlib.contextmanager
def quiet_libraries(verbose: bool = False) -> Iterator[None]:
    """transformers' log records through the root logger (into the run's log, and onto the console through
    :class:`ConsoleWarnings`, not straight onto stderr); without ``verbose`` also no third-party progress
    bars (tqdm's, Hugging Face Hub's, transformers' and datasets'), :data:`QUIET_LOGGERS` at WARNING, and
    trainers' loss printouts into the log (:func:`training_console`). Undone on exit."""
    import sys

    undo: list[Callable[[], None]] = []
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_default_handler()
        hf_logging.enable_propagation()
        undo += [hf_logging.enable_default_handler, hf_logging.disable_propagation]
        if not verbose:  # transformers' bars off turns the Hub's off (an environment variable would outlast
            hf_logging.disable_progress_bar()  # the block)
            undo.append(hf_logging.enable_progress_bar)
    except ImportError:
        pass
    try:
        if not verbose:
            _quiet_bars(undo)
            if "datasets" in sys.modules:  # read from the environment when imported later
                import datasets

                datasets.disable_progress_bars()
                undo.append(datasets.enable_progress_bars)
        yield
    finally:
        for step in reversed(undo):
            step()


def _quiet_bars(undo: list[Callable[[], None]]) -> None:
    """:data:`QUIET_LOGGERS` at WARNING, tqdm's bars off by default, ``TQDM_DISABLE`` and
    ``HF_DATASETS_DISABLE_PROGRESS_BARS`` set for child processes; each step's undoing added to ``undo``."""
    levels = {name: logging.getLogger(name).level for name in QUIET_LOGGERS}
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)

    def restore_levels() -> None:
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)

    undo.append(restore_levels)
    try:  # tqdm reads TQDM_DISABLE when imported: a bar that does not say (model2vec's, the model
        # card's) is off by default from here on
        import tqdm.std

        bar_init = tqdm.std.tqdm.__init__

        def quiet_init(self: Any, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("disable", True)
            bar_init(self, *args, **kwargs)

        tqdm.std.tqdm.__init__ = quiet_init  # type: ignore[method-assign]

        def restore_bars() -> None:
            tqdm.std.tqdm.__init__ = bar_init  # type: ignore[method-assign]

        undo.append(restore_bars)
    except ImportError:
        pass
    env = {"HF_DATASETS_DISABLE_PROGRESS_BARS": "1", "TQDM_DISABLE": "1"}
    saved_env = {key: os.environ.get(key) for key in env}
    os.environ.update(env)

    def restore_env() -> None:
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    undo.append(restore_env)


class ConsoleWarnings(logging.Handler):
    """Prints WARNING+ log records (python ``warnings`` included, via ``logging.captureWarnings``) on the
    console, once each; records logged with ``extra=LOG_ONLY`` stay in the log files, and so do known-harmless
    third-party warnings (:func:`third_party_notice`) unless ``verbose``."""

    def __init__(self, level: int = logging.WARNING, verbose: bool = True) -> None:
        super().__init__(level)
        self._seen: set[tuple[str, int, str]] = set()
        self.verbose = verbose

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, "skadapt_log_only", False):
            return
        if not self.verbose and third_party_notice(record):
            return
        try:
            message = _warning_text(record)
            key = (record.name, record.levelno, message)
            if key in self._seen:
                return
            self._seen.add(key)
            label = "[yellow]warning:[/]" if record.levelno < logging.ERROR else "[red]error (logged):[/]"
            console.print(f"{label} {escape(message)}", highlight=False, soft_wrap=True)
        except Exception:  # a console that cannot be written must not end the run
            self.handleError(record)


def _warning_text(record: logging.LogRecord) -> str:
    message = record.getMessage().strip()
    if record.name == "py.warnings":  # "file:line: Category: text\n  <source line>": drop the source echo
        lines = message.splitlines()
        if len(lines) > 1 and lines[-1].startswith("  "):
            message = "\n".join(lines[:-1]).strip()
    return message


@contextlib.contextmanager
def console_warnings(verbose: bool = True) -> Iterator[ConsoleWarnings]:
    """While active, warnings reach the console as they happen, besides any log file (e.g. ``run.log``);
    without ``verbose``, not the known-harmless third-party ones (:data:`HARMLESS`), nor any third-party
    progress bar (:func:`quiet_libraries`).

    Installs :class:`ConsoleWarnings` on the root logger and routes python ``warnings`` into logging
    (``logging.captureWarnings``), so that a run's log file gets them too; both are undone on exit.
    """
    with quiet_libraries(verbose), _console_warnings(verbose) as handler:
        yield handler


@contextlib.contextmanager
def _console_warnings(verbose: bool) -> Iterator[ConsoleWarnings]:
    handler = ConsoleWarnings(verbose=verbose)
    root = logging.getLogger()
    root.addHandler(handler)
    capturing = getattr(logging, "_warnings_showwarning", None) is not None
    if not capturing:
        logging.captureWarnings(True)
    try:
        yield handler
    finally:
        if not capturing:
            logging.captureWarnings(False)
        root.removeHandler(handler)


# ------------------------------------------------------------------------------------------------- errors

_INPUT_PARAMETERS = ("recipe", "model", "models", "corpus", "extra_corpus", "tasks")


def _command_name(function: Callable[..., Any]) -> str:
    module = function.__module__
    if module.startswith("skadapt.commands."):
        return module.rpartition(".")[2].replace("_", "-")
    return function.__name__.replace("_", " ")


def _inputs(kwargs: dict[str, Any]) -> str:
    shown = []
    for name in _INPUT_PARAMETERS:
        value = kwargs.get(name)
        if value:
            text = ", ".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
            shown.append(f"{name.replace('_', '-')} {text}")
    return f" ({'; '.join(shown)})" if shown else ""


def command_failure(command: str, kwargs: dict[str, Any], error: BaseException) -> str:
    """The one-line message for an unexpected error of ``skadapt COMMAND``: command, inputs, cause, fix."""
    output = kwargs.get("out_dir")
    option = "output_dir" if "recipe" in kwargs else "--out"  # a recipe's, or the command's option
    explained = describe_error(error, output=str(output) if output else None, output_option=option)
    return f"skadapt {command} failed{_inputs(kwargs)}: {explained} (set {DEBUG_ENV}=1 to see the traceback)"


_PASSED_TO_TYPER: tuple[type[BaseException], ...] = (
    typer.Exit,
    typer.Abort,
    click.exceptions.Exit,
    click.exceptions.Abort,
    click.ClickException,
    getattr(typer, "TyperException", click.ClickException),  # typer.BadParameter: its own click's in 0.2x
)
"""Exits and usage errors typer handles itself (typer's Exit is not click's in typer >= 0.16)."""


def _is_language_option(error: SkadaptError, kwargs: dict[str, Any]) -> bool:
    """Whether ``error`` is an unknown language and the code is the command's ``--language`` value."""
    from skadapt.languages import UnknownLanguageError

    code = kwargs.get("language")
    return isinstance(error, UnknownLanguageError) and code is not None and error.code == code


def handle_errors(function: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator: errors become one clear message and an exit code, never a traceback.

    skadapt's own errors print their message: exit 2 for usage errors (:class:`UsageError`, an unknown
    ``--language`` code; typer's ``BadParameter`` passes through to typer, which exits 2 as well), else
    exit 1. Other errors -- a full disk, a missing permission, an unreachable network or Hub, a library's
    ``ValueError`` -- print one line naming the command, its inputs, the original error and what to do
    (exit 1); set ``SKADAPT_DEBUG=1`` to get their traceback instead.

    The command runs owning SIGINT and SIGTERM (:func:`skadapt.stop.on_signals`): either one stops it
    where it is, with one line saying where it stopped and what is kept (the run's note,
    :func:`skadapt.stop.where`), and exit 130 (SIGINT, Ctrl-C) or 143 (SIGTERM).
    """
    command = _command_name(function)
    log = logging.getLogger("skadapt.cli")

    def handled(*args: Any, **kwargs: Any) -> Any:
        try:
            result = function(*args, **kwargs)
            stop.check()  # a stop a library swallowed: the command ends as stopped all the same
            return result
        except UsageError as error:
            usage_error(str(error))
        except SkadaptError as error:
            if _is_language_option(error, kwargs):
                usage_error(f"--language: {error}")
            stage = getattr(error, "stage", None)
            if stage and not isinstance(error, StageFailedError):  # a stage's own error, raised in a run
                fail(
                    f"stage {stage} failed: {error} (finished stages are kept: run the command again "
                    "to resume)"
                )
            fail(str(error))
        except KeyboardInterrupt as interrupt:
            line = stop.where(interrupt) or (
                f"interrupted by {stop.signal_name(interrupt)}: skadapt {command} stopped; what it finished "
                "is kept (a run's finished stages, a stage's checkpoints and cached answers); run the same "
                "command again to resume"
            )
            # on a line of its own: after the terminal's ^C, or a progress bar the stop cut short
            console.print(f"\n{line}", markup=False, soft_wrap=True, emoji=False, highlight=False)
            raise SystemExit(stop.exit_code(interrupt)) from None
        except _PASSED_TO_TYPER:
            raise  # fail() exits once, with its own message; typer prints BadParameter & co. and exits 2
        except Exception as error:
            if os.environ.get(DEBUG_ENV):
                raise
            log.debug("skadapt %s failed", command, exc_info=error, extra=LOG_ONLY)
            kind, culprit = classify_error(error)
            if kind == NOT_FOUND and isinstance(culprit, FileNotFoundError):
                fail(f"file not found: {culprit.filename or culprit}")
            fail(command_failure(command, kwargs, error))

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with stop.on_signals():
            return handled(*args, **kwargs)

    return wrapper

# The README's two commands: `make demo` runs the whole story, `make test` runs every gate.
.PHONY: demo test serve format example docs

demo:
	@UV=$$(scripts/bootstrap.sh) && $$UV run --no-sync python -m artifactr.files.programs.demo

test:
	@UV=$$(scripts/bootstrap.sh) && UV="$$UV" scripts/test.sh

format:
	@UV=$$(scripts/bootstrap.sh) && $$UV run --no-sync ruff format src tests scripts worker migrations examples docs && $$UV run --no-sync ruff check --fix src tests scripts worker migrations examples

serve:
	@UV=$$(scripts/bootstrap.sh) && $$UV run --no-sync python -m artifactr.files.programs.serve --port $(or $(PORT),8000)

example:
	@UV=$$(scripts/bootstrap.sh) && $$UV run --no-sync python -m examples.walkthrough

docs:
	@UV=$$(scripts/bootstrap.sh) && $$UV run --no-sync mkdocs build

# The README's two commands: `make demo` runs the whole story, `make test` runs every gate.
.PHONY: demo test serve format

demo:
	@UV=$$(scripts/bootstrap.sh) && $$UV run --no-sync python -m artifactr.files.demo

test:
	@UV=$$(scripts/bootstrap.sh) && UV="$$UV" scripts/test.sh

format:
	@UV=$$(scripts/bootstrap.sh) && $$UV run --no-sync ruff format src tests scripts worker migrations docs && $$UV run --no-sync ruff check --fix src tests scripts worker migrations

serve:
	@UV=$$(scripts/bootstrap.sh) && $$UV run --no-sync python -m artifactr.files.serve --port 8000

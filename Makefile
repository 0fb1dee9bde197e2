# twinbox: the two commands of the README, over meson.
#   make demo   build, then run the main job on the local engine
#   make check  build, then run every test, also under ASan+UBSan
# Both install missing Debian packages first (as root), or print the apt-get line.

PACKAGES := gcc g++ make meson ninja-build pkg-config git python3 binutils \
	libevent-dev libjson-c-dev libsqlite3-dev libgit2-dev libsodium-dev \
	libcurl4-openssl-dev libssl-dev libpcre2-dev bubblewrap abigail-tools nodejs curl

BUILD ?= build
ASAN_BUILD ?= build-asan
MESON_OPTS ?= -Dwerror=true

.PHONY: all deps build demo check abi-baseline clean

all: build

deps:
	@missing=""; for p in $(PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "installing:$$missing"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null || exit 1; \
		else \
			echo "twinbox needs these Debian packages; run:"; \
			echo "  sudo apt-get install -y$$missing"; \
			exit 1; \
		fi; \
	fi

$(BUILD)/build.ninja: | deps
	meson setup $(BUILD) $(MESON_OPTS)

$(ASAN_BUILD)/build.ninja: | deps
	meson setup $(ASAN_BUILD) $(MESON_OPTS) -Db_sanitize=address,undefined -Db_lundef=false

build: deps $(BUILD)/build.ninja
	meson compile -C $(BUILD)

# A daemon from an earlier build may be running: restart it (sandboxes survive).
demo: build
	@$(BUILD)/cli/twinbox daemon stop >/dev/null 2>&1 || true
	$(BUILD)/cli/twinbox demo

check: build $(ASAN_BUILD)/build.ninja
	meson test -C $(BUILD) --print-errorlogs --num-processes 2
	meson compile -C $(ASAN_BUILD)
	meson test -C $(ASAN_BUILD) --print-errorlogs --num-processes 2

abi-baseline: build
	tests/abi/regen-baseline.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)

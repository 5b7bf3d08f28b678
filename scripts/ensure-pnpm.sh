# Sourced by the other scripts: installs the pinned pnpm when it is missing or another version.
PNPM_VERSION=12.4.2
if [[ "$(pnpm --version 2>/dev/null || true)" != "$PNPM_VERSION" ]]; then
  echo "installing pnpm $PNPM_VERSION"
  npm install --global --save-exact "pnpm@$PNPM_VERSION"
fi
export TURBO_TELEMETRY_DISABLED=1

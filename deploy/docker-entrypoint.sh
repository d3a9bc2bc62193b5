#!/bin/sh
# Container entry point: refuse to serve beyond loopback without a token, then run pinchtab.
# (pinchtab itself refuses too; saying it here gives the container's log a plain message first.)
set -eu

bind="${PINCHTAB_BIND:-127.0.0.1}"
case "$bind" in
  127.*|localhost|::1|"[::1]") exposed=no ;;
  *) exposed=yes ;;
esac

if [ "$exposed" = yes ] && [ -z "${PINCHTAB_TOKEN:-}" ]; then
  echo "pinchtab: PINCHTAB_BIND=$bind serves every network the container is on;" \
       "set PINCHTAB_TOKEN to a secret (clients send Authorization: Bearer <token>)" >&2
  exit 2
fi

exec pinchtab "$@"

#!/usr/bin/env bash
# Installs the Debian programs the SMTP benchmark (test/bench/smtp-bench.ts) drives, when they are
# missing: Postfix, for its load tools smtp-source and smtp-sink and for a private Postfix relay the
# bench compares Herald with; OpenDKIM, the milter that signs for the bench's second Postfix
# listener (a relay that sends for customers must sign, as Herald does). Needs root and apt-get;
# otherwise it stops with the command to run.
#
# Installed non-interactively with debconf's "No configuration" answer, so apt neither prompts nor
# configures a system MTA; and the system Postfix is stopped and disabled afterwards, so nothing is
# left listening on port 25. Likewise the system OpenDKIM service the package starts. The bench
# starts its own Postfix instance (postfix -c DIR) and its own opendkim (-f -x FILE), and stops them.
set -euo pipefail
missing=()
command -v smtp-source >/dev/null 2>&1 || [ -x /usr/sbin/smtp-source ] || missing+=(postfix)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v opendkim >/dev/null 2>&1 || [ -x /usr/sbin/opendkim ] || missing+=(opendkim)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-bench-tools: missing ${missing[*]}; install with:" >&2
    echo "  echo 'postfix postfix/main_mailer_type select No configuration' | sudo debconf-set-selections" >&2
    echo "  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
  echo "ensure-bench-tools: installing ${missing[*]} (apt-get, postfix with 'No configuration')" >&2
  export DEBIAN_FRONTEND=noninteractive
  echo 'postfix postfix/main_mailer_type select No configuration' | debconf-set-selections
  apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
    apt-get update >/dev/null
    apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
  }
  # "No configuration" leaves no main.cf and starts nothing; make sure of it whatever the answer was.
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    systemctl disable --now postfix >/dev/null 2>&1 || true
    systemctl disable --now opendkim >/dev/null 2>&1 || true
  fi
  /usr/sbin/postfix stop >/dev/null 2>&1 || true
  # Without systemd the package's init script may have started OpenDKIM: stop the one it started.
  if [[ " ${missing[*]} " == *" opendkim "* ]] && [ -x /etc/init.d/opendkim ]; then
    /etc/init.d/opendkim stop >/dev/null 2>&1 || true
  fi
fi
# A system Postfix listening on port 25 is not expected: say so, do not stop someone else's MTA.
if [ -f /var/spool/postfix/pid/master.pid ] && kill -0 "$(tr -d ' ' </var/spool/postfix/pid/master.pid)" 2>/dev/null; then
  echo "ensure-bench-tools: note: a system Postfix is running (master pid $(tr -d ' ' </var/spool/postfix/pid/master.pid)); the bench does not use it" >&2
fi
exit 0

#!/usr/bin/env bash
# Installs the Debian programs the test suites drive as independent peers of Herald, when they are
# missing: swaks (an SMTP client, against the relay), with the Perl TLS modules its STARTTLS and
# implicit TLS need; Debian's chromium, which the dashboard's browser suites (test/browser) drive
# with playwright-core, and a font for it to render text with; kubectl (Debian's kubernetes-client,
# or any newer one already installed), whose `kubectl kustomize` renders k8s/ in test/deploy. Needs root and apt-get; otherwise it
# stops with the command to run.
set -euo pipefail
missing=()
command -v swaks >/dev/null 2>&1 || missing+=(swaks)
perl -MNet::SSLeay -MIO::Socket::SSL -e1 >/dev/null 2>&1 || missing+=(libnet-ssleay-perl libio-socket-ssl-perl)
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -d /usr/share/fonts/truetype/dejavu ] || missing+=(fonts-dejavu-core)
command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-test-tools: missing ${missing[*]}; install with: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "ensure-test-tools: installing ${missing[*]} (apt-get)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
  apt-get update >/dev/null
  apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
}

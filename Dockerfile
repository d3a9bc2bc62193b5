# Pinchtab (server mode: the dashboard, instances, profiles) on Alpine with its own Chromium. Run:
#   docker run -p 9867:9867 -e PINCHTAB_TOKEN=<secret> pinchtab
# (`... pinchtab bridge` for a single browser instead.)
FROM python:3.12-alpine3.20

# Chromium and the fonts pages need; versions follow the Alpine release pinned above.
# hadolint ignore=DL3018
RUN apk add --no-cache chromium font-noto font-noto-emoji ttf-freefont tini

RUN addgroup -S -g 10001 pinchtab && adduser -S -u 10001 -G pinchtab -h /home/pinchtab pinchtab

WORKDIR /opt/pinchtab
COPY setup.cfg pyproject.toml README.md wsgi.py ./
COPY app ./app
COPY cdp ./cdp
COPY human ./human
COPY profiles ./profiles
RUN pip install --no-cache-dir .

COPY deploy/docker-entrypoint.sh /usr/local/bin/pinchtab-entrypoint
# In a container Chromium's sandbox has no user namespaces to use: the container is the sandbox.
COPY deploy/container-config.json /etc/pinchtab/config.json

ENV PYTHONUNBUFFERED=1 \
    PINCHTAB_CONFIG=/etc/pinchtab/config.json \
    PINCHTAB_BIND=0.0.0.0 \
    PINCHTAB_PORT=9867 \
    CHROME_BIN=/usr/bin/chromium-browser

USER 10001:10001
EXPOSE 9867
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["wget", "-q", "-O", "/dev/null", "http://127.0.0.1:9867/health"]

ENTRYPOINT ["/sbin/tini", "--", "pinchtab-entrypoint"]
CMD ["server"]

// The settings that say where this server serves Neo4j Browser and how clients log in
// (read by pipelines.browser for /readyz).
SHOW SETTINGS YIELD name, value
WHERE name IN ['server.http.enabled', 'server.http.advertised_address',
               'server.bolt.advertised_address', 'dbms.security.auth_enabled',
               'browser.post_connect_cmd']
RETURN name, value

// Starts Swagger UI on /docs over this API's /openapi.json. A file of its own, served by the app, so that the page's
// Content-Security-Policy allows scripts from this site only, with no inline script (api/app.py, SWAGGER_PAGE).
// deepLinking: /docs#/<tag>/<operationId> opens that operation (the act forms link to theirs).
window.ui = SwaggerUIBundle({url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: true});

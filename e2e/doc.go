// Package e2e holds end-to-end tests that drive a real headless Chromium
// against Bunting's HTTP surfaces. It is its own module, so the browser
// driver never becomes a dependency of the product.
package e2e

// Fixtures shared by the tests of the modules that read pods by name.

/**
 * A Deployment's pod named as the API server names it: the ReplicaSet's `<deployment>-<template hash>-`, cut
 * to 58 characters, then five random ones.
 */
export function deploymentPodName(deployment: string, hash = "6b7c8d9f5d", random = "x2x4z"): string {
  return `${`${deployment}-${hash}-`.slice(0, 58)}${random}`;
}

/* snowid--1.0--1.1.sql: update from 1.0 to 1.1 */

\echo Use "ALTER EXTENSION snowid UPDATE TO '1.1'" to load this file. \quit

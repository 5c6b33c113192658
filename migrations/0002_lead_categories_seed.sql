-- The built-in lead categories. Their ids are part of the interface (6 = Out Of Office).
INSERT OR IGNORE INTO `lead_categories` (`id`, `account_id`, `name`) VALUES
	(1, NULL, 'Interested'),
	(2, NULL, 'Meeting Request'),
	(3, NULL, 'Not Interested'),
	(4, NULL, 'Do Not Contact'),
	(5, NULL, 'Information Request'),
	(6, NULL, 'Out Of Office'),
	(7, NULL, 'Wrong Person');
